"""Parses every example of a revision document with one generated Python
client's models (`cargo xtask clients`).

The xtask writes the examples that name a component schema to a JSON file
(a list of {place, pointer, model, data, value}; `model` and `data` are
{name, list, map}). Each value is parsed with its model's `from_dict` (an enum
by calling it), a webhook payload as its envelope and its `data` as the
event's schema. Both generators' `from_dict` raise on a missing required
property or an unknown enum value, and openapi-generator's (pydantic) also
on a wrong type, length or pattern. A map schema (an object without
properties) for which a generator makes no class, only a dict type, must
be an object. Scalar examples (a property's, a
parameter's) name no model: the TypeScript check has them.

usage: python examples.py --models switchboard_client.models examples.json
"""

import argparse
import enum
import importlib
import json
import sys
from types import ModuleType
from typing import Any


def model_class(models: ModuleType, name: str) -> Any:
    # openapi-generator renames a model whose name Python reserves
    # (`Date` -> `ModelDate`); openapi-python-client keeps the schema's name
    for candidate in (name, f"Model{name}"):
        found = getattr(models, candidate, None)
        if found is not None:
            return found
    return None


def parse(models: ModuleType, model: dict[str, Any], value: Any) -> None:
    cls = model_class(models, model["name"])
    if cls is None and not model["map"]:
        raise LookupError(f"no model class {model['name']} in {models.__name__}: the generator dropped the schema")
    for item in value if model["list"] else [value]:
        if cls is None:
            if not isinstance(item, dict):
                raise TypeError(f"{model['name']} is a map, the example is not")
        elif isinstance(cls, type) and issubclass(cls, enum.Enum):
            cls(item)
        elif cls.from_dict(item) is None:
            raise ValueError(f"{model['name']}.from_dict gave None")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--models", required=True, help="the generated models module")
    p.add_argument("manifest")
    args = p.parse_args()
    models = importlib.import_module(args.models)
    with open(args.manifest, encoding="utf-8") as f:
        examples = json.load(f)
    failures = []
    for e in examples:
        try:
            if e["model"]:
                parse(models, e["model"], e["value"])
            if e["data"]:
                parse(models, e["data"], e["value"]["data"])
        except Exception as err:  # noqa: BLE001: every failure is reported, then the run fails
            failures.append(f"{e['place']} (#{e['pointer']}): {type(err).__name__}: {err}")
    for f in failures:
        print(f"   {f}", file=sys.stderr)
    print(f"   parsed {len(examples) - len(failures)} of {len(examples)} examples with {args.models}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
