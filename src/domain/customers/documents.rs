//! A customer's contact, billing and shipping: the documents a request
//! gives, and the store's own documents they are kept as. Field by field
//! both ways, so that a field one side lacks does not compile.

use crate::store::{Address, Billing, Contact, Shipping};
use crate::wire::latest as wire;

impl From<wire::CustomerContact> for Contact {
    fn from(c: wire::CustomerContact) -> Self {
        Contact { email: c.email, msisdn: c.msisdn }
    }
}

impl From<Contact> for wire::CustomerContact {
    fn from(c: Contact) -> Self {
        wire::CustomerContact { email: c.email, msisdn: c.msisdn }
    }
}

impl From<wire::CustomerBilling> for Billing {
    fn from(b: wire::CustomerBilling) -> Self {
        Billing {
            method: b.method.into(),
            currency: b.currency,
            email: b.email,
            address: b.address.map(Into::into),
            // left out of a request: no automatic collection (its default)
            auto_pay: b.auto_pay,
            default_payment_profile_id: b.default_payment_profile_id,
        }
    }
}

impl From<Billing> for wire::CustomerBilling {
    fn from(b: Billing) -> Self {
        wire::CustomerBilling {
            method: b.method.into(),
            currency: b.currency,
            email: b.email,
            address: b.address.map(Into::into),
            auto_pay: b.auto_pay,
            default_payment_profile_id: b.default_payment_profile_id,
        }
    }
}

impl From<wire::Shipping> for Shipping {
    fn from(s: wire::Shipping) -> Self {
        Shipping { name: s.name, address: s.address.into(), msisdn: s.msisdn, instructions: s.instructions }
    }
}

impl From<Shipping> for wire::Shipping {
    fn from(s: Shipping) -> Self {
        wire::Shipping { name: s.name, address: s.address.into(), msisdn: s.msisdn, instructions: s.instructions }
    }
}

impl From<wire::Address> for Address {
    fn from(a: wire::Address) -> Self {
        Address {
            street1: a.street1,
            street2: a.street2,
            zip: a.zip,
            city: a.city,
            state: a.state,
            region: a.region,
            country: a.country,
            attention: a.attention,
        }
    }
}

impl From<Address> for wire::Address {
    fn from(a: Address) -> Self {
        wire::Address {
            street1: a.street1,
            street2: a.street2,
            zip: a.zip,
            city: a.city,
            state: a.state,
            region: a.region,
            country: a.country,
            attention: a.attention,
        }
    }
}
