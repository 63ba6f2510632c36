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
   themselves are tested in tests/api/customers.rs. A payment link's
   fields are repaired the same way (exactly one of orderId and invoiceId,
   half the invoiceIds naming a demo invoice; setAsDefaultPaymentProfile and
   grantAutopayConsent with savePaymentProfile; http(s) return URLs; an
   expiresAt within the next 24 hours): tests/api/payment_links.rs; so are
   a payment profile session's return URLs; so is mark-paid's paidAt (not
   in the future): tests/api/invoices.rs.
3. Existing payment objects. Links, intents, profiles, sessions, profile
   sessions and invoices have no `rid_`
   references a dictionary could name; the xtask passes the demo's ids in
   the environment, and half of the positive cases name one of them.
"""

import datetime
import json
import os
import pathlib
import random
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

# A Swedish personnummer (YYYYMMDD-NNNN) ends in the Luhn check digit of
# its last ten digits, which no pattern can say either.
schemathesis.openapi.format(
    "se-identity",
    st.tuples(st.integers(1940, 2005), st.integers(1, 12), st.integers(1, 28), st.integers(0, 999)).map(
        lambda t: (lambda ten: f"{t[0] // 100}{ten[:6]}-{ten[6:]}")(_luhn_complete(f"{t[0] % 100:02d}{t[1]:02d}{t[2]:02d}{t[3]:03d}"))
    ),
)

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


DEMO_IDS = {
    "paymentLinkId": os.environ.get("SWITCHBOARD_DEMO_PAYMENT_LINKS", ""),
    "paymentIntentId": os.environ.get("SWITCHBOARD_DEMO_PAYMENT_INTENTS", ""),
    "paymentProfileId": os.environ.get("SWITCHBOARD_DEMO_PAYMENT_PROFILES", ""),
    "paymentSessionId": os.environ.get("SWITCHBOARD_DEMO_PAYMENT_SESSIONS", ""),
    "paymentProfileSessionId": os.environ.get("SWITCHBOARD_DEMO_PAYMENT_PROFILE_SESSIONS", ""),
    "invoiceId": os.environ.get("SWITCHBOARD_DEMO_INVOICES", ""),
    "reportRunId": os.environ.get("SWITCHBOARD_DEMO_REPORT_RUNS", ""),
}


def _name_demo_objects(case):
    params = case.path_parameters or {}
    for name, ids in DEMO_IDS.items():
        value = params.get(name)
        # a schema-valid id (1 to 64 characters) only: a negative case stays one
        if ids and isinstance(value, str) and 1 <= len(value) <= 64 and random.random() < 0.5:
            params[name] = random.choice(ids.split(","))


def _valid_text(value, longest):
    return isinstance(value, str) and 1 <= len(value) <= longest


def _repair_return_urls(body):
    """Where a hosted page sends the payer: an absolute http(s) URL."""
    if not isinstance(body, dict):
        return
    for field in ("returnUrl", "cancelUrl"):
        if _valid_text(body.get(field), 2048) and not re.match(r"^https?://[^/?#\s]+", body[field]):
            body[field] = "https://shop.example/return"


def _repair_payment_link(body):
    if not isinstance(body, dict):
        return
    order, invoice = body.get("orderId"), body.get("invoiceId")
    if _valid_text(order, 64) and _valid_text(invoice, 64):
        del body["invoiceId"]
    elif "orderId" not in body and "invoiceId" not in body:
        body["orderId"] = "00000000-0000-4000-8000-000000000000"
    if _valid_text(body.get("invoiceId"), 64) and DEMO_IDS["invoiceId"] and random.random() < 0.5:
        body["invoiceId"] = random.choice(DEMO_IDS["invoiceId"].split(","))
    if (body.get("setAsDefaultPaymentProfile") is True or body.get("grantAutopayConsent") is True) and isinstance(body.get("savePaymentProfile", False), bool):
        body["savePaymentProfile"] = True
    _repair_return_urls(body)
    if isinstance(body.get("expiresAt"), str) and re.match(r"^\d{4}-\d{2}-\d{2}T", body["expiresAt"]):
        soon = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
        body["expiresAt"] = soon.isoformat()


def _repair_report(body):
    """A report's period ends after it begins, and the events report holds
    the whole log (no customerId): what a schema cannot say of two fields."""
    params = body.get("parameters") if isinstance(body, dict) else None
    if not isinstance(params, dict):
        return
    start, end = params.get("from"), params.get("to")
    if isinstance(start, str) and isinstance(end, str) and end <= start:
        params["from"], params["to"] = "2020-01-01T00:00:00Z", "2030-01-01T00:00:00Z"
    if body.get("reportKey") == "events":
        params.pop("customerId", None)


def _repair_mark_paid(body):
    """Money was received in the past: paidAt is not in the future."""
    if isinstance(body, dict) and isinstance(body.get("paidAt"), str) and re.match(r"^\d{4}-\d{2}-\d{2}T", body["paidAt"]):
        earlier = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)
        body["paidAt"] = earlier.isoformat()


@schemathesis.hook
def before_call(ctx, case, kwargs):
    _name_demo_objects(case)
    if case.path == "/invoices/{invoiceId}/mark-paid" and case.method.upper() == "POST":
        _repair_mark_paid(case.body)
    if case.path == "/payment-links" and case.method.upper() == "POST":
        _repair_payment_link(case.body)
    if case.path == "/payment-profiles/sessions" and case.method.upper() == "POST":
        _repair_return_urls(case.body)
    if case.path == "/reports" and case.method.upper() == "POST":
        _repair_report(case.body)
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
