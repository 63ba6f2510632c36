"""The scenario of `cargo xtask clients` through the client openapi-generator's
`python` generator makes from a revision's document (package
`switchboard_openapi`, on PYTHONPATH): create a customer with an idempotency
key, replay it, read it, find it in the list, miss an unknown one (404, the
Error model), read the catalog's offerings and one of them, list the users.
Every typed call must return its model (pydantic validates each answer on
the way in); the unknown customer's must raise NotFoundException carrying
the Error.

Environment: SWITCHBOARD_URL (…/api/v2), SWITCHBOARD_KEY, SWITCHBOARD_REVISION.
"""

import os
import sys
import uuid
from collections.abc import Mapping
from typing import Any, TypeVar

from switchboard_openapi import ApiClient, Configuration
from switchboard_openapi.api.customers_api import CustomersApi
from switchboard_openapi.api.product_catalogs_api import ProductCatalogsApi
from switchboard_openapi.api.users_api import UsersApi
from switchboard_openapi.exceptions import NotFoundException
from switchboard_openapi.models import (
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

T = TypeVar("T")
REVISION = os.environ["SWITCHBOARD_REVISION"]


def header(headers: Mapping[str, str] | None, name: str) -> str | None:
    return next((v for k, v in (headers or {}).items() if k.lower() == name.lower()), None)


def expect(what: str, wanted: int, status: int, headers: Mapping[str, str] | None, got: Any, model: type[T]) -> T:
    """`got` after checking its status, that it is the model, and that it was answered in the revision asked for."""
    if status != wanted:
        sys.exit(f"{what}: status {status}, wanted {wanted}")
    if header(headers, "Api-Revision") != REVISION:
        sys.exit(f"{what}: answered in revision {header(headers, 'Api-Revision')}, asked {REVISION}")
    if not isinstance(got, model):
        sys.exit(f"{what}: returned {type(got).__name__}, not {model.__name__}")
    print(f"   {what}: {status} {model.__name__}", file=sys.stderr)
    return got


def main() -> None:
    config = Configuration(host=os.environ["SWITCHBOARD_URL"], api_key={"ApiKey": os.environ["SWITCHBOARD_KEY"]})
    client = ApiClient(config)
    client.set_default_header("Api-Revision", REVISION)
    customers, catalog, users = CustomersApi(client), ProductCatalogsApi(client), UsersApi(client)

    name = f"Clients check, openapi-generator {uuid.uuid4()}"
    body = CreateCustomerRequest(
        customer_type=CustomerType.CONSUMER,
        name=name,
        contact=CustomerContact(email="clients-check@example.com"),
    )
    key = str(uuid.uuid4())
    first = customers.customer_create_with_http_info(body, x_idempotency_key=key)
    created = expect("POST /customers", 201, first.status_code, first.headers, first.data, Customer)
    again = customers.customer_create_with_http_info(body, x_idempotency_key=key)
    replayed = expect("POST /customers again, same key", 201, again.status_code, again.headers, again.data, Customer)
    if replayed.customer_id != created.customer_id or header(again.headers, "Idempotent-Replayed") != "true":
        sys.exit("the retry was not a replay of the first answer")

    got = customers.customer_view_with_http_info(str(created.customer_id))
    viewed = expect("GET /customers/{id}", 200, got.status_code, got.headers, got.data, Customer)
    if viewed.name != name:
        sys.exit(f"GET /customers/{{id}}: name {viewed.name!r}, wanted {name!r}")

    cursor: str | None = None
    found = False
    while True:
        got_page = customers.customer_list_with_http_info(cursor=cursor)
        page = expect("GET /customers", 200, got_page.status_code, got_page.headers, got_page.data, CustomerList)
        found = found or any(c.customer_id == created.customer_id for c in page.items)
        cursor = page.pagination.next_cursor
        if found or cursor is None:
            break
    if not found:
        sys.exit("GET /customers: the new customer is in no page")

    try:
        customers.customer_view("rid_no-such-customer")
        sys.exit("GET /customers/{unknown}: answered, wanted 404")
    except NotFoundException as e:
        missing = expect("GET /customers/{unknown}", 404, e.status, e.headers, e.data, Error)
        if missing.internal_code != "customer_not_found" or not missing.message or not missing.code or not missing.trace_id:
            sys.exit(f"GET /customers/{{unknown}}: not the Error wanted: {missing.to_dict()}")

    got_offerings = catalog.product_offering_list_with_http_info()
    offerings = expect(
        "GET /product-offerings", 200, got_offerings.status_code, got_offerings.headers, got_offerings.data, ProductOfferingList
    )
    if not offerings.items:
        sys.exit("GET /product-offerings: the demo catalog is empty")
    listed = offerings.items[0]
    got_one = catalog.product_offering_view_with_http_info(str(listed.product_offering_id))
    one = expect("GET /product-offerings/{id}", 200, got_one.status_code, got_one.headers, got_one.data, ProductOffering)
    if one.name != listed.name:
        sys.exit("GET /product-offerings/{id}: not the offering listed")

    got_users = users.user_list_with_http_info()
    if not expect("GET /users", 200, got_users.status_code, got_users.headers, got_users.data, UserList).items:
        sys.exit("GET /users: the demo has users")


if __name__ == "__main__":
    main()
