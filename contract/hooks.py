"""Schemathesis hooks for the contract run (`cargo xtask contract`).

Two kinds, both about data the documents cannot fully describe:

1. Value formats beyond JSON Schema's own. The documents mark phone numbers,
   countries and currencies with a `format` and a syntactic `pattern`; the
   server checks them against real registries (libphonenumber's numbering
   plans, ISO 3166, ISO 4217). A regex
   cannot say "an assigned country code", so positive cases draw real
   values here, while negative cases still break the pattern. The same goes
   for the `Api-Revision` header (`format: api-revision`): only the names of
   the published revisions are accepted, read here from spec/. (The xtask
   sends the revision under test itself; without a format, schemathesis's
   coverage phase finds no positive value for a header pattern holding
   anything but letters and digits, seeds every case with a negative one,
   and then cannot tell a negative case that the sent header made valid.)
2. Cross-field billing and address rules (EMAIL_INVOICE needs an email,
   PAPER_INVOICE an address, autoPay a payment profile, a US address a ZIP
   code). OpenAPI 3.0 schemas in this codebase do not express
   if-then rules, so a body that breaks one is repaired just before it is
   sent (`before_call` runs in every phase; the coverage phase applies no
   data-generation hooks). A repair only fills an absent field or replaces a schema-valid
   value, so it never turns a negative case into a valid one. The rules
   themselves are tested in tests/api/customers.rs.
"""

import json
import pathlib
import re

import schemathesis
from hypothesis import strategies as st

schemathesis.openapi.format(
    "phone",
    st.one_of(
        st.integers(0, 9_999_999).map(lambda n: f"+4670{n:07d}"),  # Swedish mobile
        st.integers(0, 99_999_999).map(lambda n: f"+49151{n:08d}"),  # German mobile
        st.integers(0, 99_999_999).map(lambda n: f"+336{n:08d}"),  # French mobile
    ),
)
schemathesis.openapi.format("iso3166-alpha2", st.sampled_from(["SE", "FI", "DE", "GB", "US", "JP", "BH", "NO"]))
schemathesis.openapi.format("iso4217", st.sampled_from(["SEK", "EUR", "USD", "GBP", "JPY", "BHD", "NOK"]))
SPEC = pathlib.Path(__file__).resolve().parent.parent / "spec"
REVISIONS = sorted(json.loads(p.read_text())["info"]["version"] for p in SPEC.glob("*.json"))
schemathesis.openapi.format("api-revision", st.sampled_from(REVISIONS))



def _luhn_complete(body):
    """`body` with the Luhn check digit that makes it a valid ICCID."""
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return body + str((10 - total % 10) % 10)


# An ICCID's last digit is a Luhn check digit, which no pattern can say.
schemathesis.openapi.format("iccid", st.integers(0, 10**14 - 1).map(lambda n: _luhn_complete(f"8946{n:014d}")))

US_ZIP = re.compile(r"^[0-9]{5}(-[0-9]{4})?$")


def _repair_address(address):
    if not isinstance(address, dict) or address.get("country") != "US":
        return
    zip_code = address.get("zip")
    if isinstance(zip_code, str) and 1 <= len(zip_code) <= 20 and not US_ZIP.match(zip_code):
        address["zip"] = "94105"


def _repair_billing(billing):
    if not isinstance(billing, dict):
        return
    method = billing.get("method")
    if method == "EMAIL_INVOICE" and "email" not in billing:
        billing["email"] = "invoices@example.com"
    if method == "PAPER_INVOICE" and "address" not in billing:
        billing["address"] = {"street1": "Storgatan 1", "city": "Stockholm", "zip": "111 22", "country": "SE"}
    if billing.get("autoPay") is True and "defaultPaymentProfileId" not in billing:
        billing["autoPay"] = False
    _repair_address(billing.get("address"))


@schemathesis.hook
def before_call(ctx, case, kwargs):
    body = case.body
    if isinstance(body, dict) and body.get("simType") == "PSIM" and "iccid" not in body and case.path.endswith("/change-sim"):
        # a new PSIM is named by its card's ICCID
        body["iccid"] = _luhn_complete("8946" + "0" * 13 + "7")
    if isinstance(body, dict) and isinstance(body.get("dateOfBirth"), str) and body["dateOfBirth"] > "2000-01-01":
        # a subscriber's birth date is not in the future
        body["dateOfBirth"] = "1990-01-01"
    if isinstance(body, dict):
        _repair_billing(body.get("billing"))
        _repair_address(body.get("address"))
        shipping = body.get("shipping")
        if isinstance(shipping, dict):
            _repair_address(shipping.get("address"))
