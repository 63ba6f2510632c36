"""The scenario of `cargo xtask clients` through the client openapi-python-client
generates from a revision's document (package `switchboard_client`, on
PYTHONPATH): create a customer with an idempotency key, replay it, read it,
find it in the list, miss an unknown one (404, the Error model), read the
catalog's offerings and one of them, list the users. Every answer must have
its status and parse into its model (`parsed` is the model, not None).
Checked with `mypy --strict` before it runs.

Environment: SWITCHBOARD_URL (…/api/v2), SWITCHBOARD_KEY, SWITCHBOARD_REVISION.
"""

import os
import sys
import uuid
from typing import Any, TypeVar

from switchboard_client import AuthenticatedClient
from switchboard_client.api.customers import customer_create, customer_list, customer_view
from switchboard_client.api.product_catalogs import product_offering_list, product_offering_view
from switchboard_client.api.users import user_list
from switchboard_client.models import (
    CreateCustomerRequest,
    Customer,
    CustomerContact,
    CustomerList,
    CustomerType,
    Error,
    ProductOffering,
    ProductOfferingList,
    UserList,
)
from switchboard_client.types import UNSET, Response, Unset

T = TypeVar("T")
REVISION = os.environ["SWITCHBOARD_REVISION"]


def expect(what: str, response: Response[Any], status: int, model: type[T]) -> T:
    """The answer's parsed model, after checking its status and revision."""
    if response.status_code != status:
        sys.exit(f"{what}: status {response.status_code}, wanted {status}: {response.content[:500]!r}")
    if response.headers.get("Api-Revision") != REVISION:
        sys.exit(f"{what}: answered in revision {response.headers.get('Api-Revision')}, asked {REVISION}")
    if not isinstance(response.parsed, model):
        sys.exit(f"{what}: parsed as {type(response.parsed).__name__}, not {model.__name__}")
    print(f"   {what}: {status} {model.__name__}", file=sys.stderr)
    return response.parsed


def main() -> None:
    client = AuthenticatedClient(
        base_url=os.environ["SWITCHBOARD_URL"],
        token=os.environ["SWITCHBOARD_KEY"],
        auth_header_name="X-Api-Key",
        prefix="",
        # no Api-Revision header: each call sends its document's revision
        # (the parameter's default), which `expect` checks was answered
        raise_on_unexpected_status=True,
    )
    name = f"Clients check, openapi-python-client {uuid.uuid4()}"
    body = CreateCustomerRequest(
        customer_type=CustomerType.CONSUMER,
        name=name,
        contact=CustomerContact(email="clients-check@example.com"),
    )
    key = str(uuid.uuid4())
    created = expect(
        "POST /customers",
        customer_create.sync_detailed(client=client, body=body, x_idempotency_key=key),
        201,
        Customer,
    )
    again = customer_create.sync_detailed(client=client, body=body, x_idempotency_key=key)
    replayed = expect("POST /customers again, same key", again, 201, Customer)
    if replayed.customer_id != created.customer_id or again.headers.get("Idempotent-Replayed") != "true":
        sys.exit("the retry was not a replay of the first answer")

    # a path's id is a string (an id or a `rid_` reference); the answer's is a UUID
    viewed = expect("GET /customers/{id}", customer_view.sync_detailed(str(created.customer_id), client=client), 200, Customer)
    if viewed.name != name:
        sys.exit(f"GET /customers/{{id}}: name {viewed.name!r}, wanted {name!r}")

    cursor: str | Unset = UNSET
    found = False
    while not found:
        page = expect("GET /customers", customer_list.sync_detailed(client=client, cursor=cursor), 200, CustomerList)
        found = any(c.customer_id == created.customer_id for c in page.items)
        next_cursor = page.pagination.next_cursor
        if not isinstance(next_cursor, str):
            break
        cursor = next_cursor
    if not found:
        sys.exit("GET /customers: the new customer is in no page")

    missing = expect("GET /customers/{unknown}", customer_view.sync_detailed("rid_no-such-customer", client=client), 404, Error)
    if missing.internal_code != "customer_not_found" or not missing.message or not missing.code or not missing.trace_id:
        sys.exit(f"GET /customers/{{unknown}}: not the Error wanted: {missing.to_dict()}")

    offerings = expect("GET /product-offerings", product_offering_list.sync_detailed(client=client), 200, ProductOfferingList)
    if not offerings.items:
        sys.exit("GET /product-offerings: the demo catalog is empty")
    first = offerings.items[0]
    one = expect(
        "GET /product-offerings/{id}",
        product_offering_view.sync_detailed(str(first.product_offering_id), client=client),
        200,
        ProductOffering,
    )
    if one.name != first.name:
        sys.exit("GET /product-offerings/{id}: not the offering listed")

    users = expect("GET /users", user_list.sync_detailed(client=client), 200, UserList)
    if not users.items:
        sys.exit("GET /users: the demo has users")


if __name__ == "__main__":
    main()
