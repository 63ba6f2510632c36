//! Field rules beyond what the schema can say: real phone numbers, ISO
//! country and currency codes, BCP 47 locales of registered subtags, US
//! ZIP codes, billing rules. (A locale's shape is the schema's pattern,
//! RFC 5646's grammar, checked before these.) Each check adds a detail
//! naming the field; the caller answers all of them at once.

use crate::error::{Detail, Error};
use crate::wire::latest::{Address, BillingMethod, CustomerBilling, CustomerContact, Shipping};

/// What a subscription (or a number) shows as: its custom display name,
/// else its number pretty-printed in international form (`+46 70 123 45 67`).
pub fn number_display(msisdn: &str, display_name: Option<&str>) -> String {
    if let Some(name) = display_name {
        return name.to_string();
    }
    phonenumber::parse(None, msisdn).map(|n| n.format().mode(phonenumber::Mode::International).to_string()).unwrap_or_else(|_| msisdn.to_string())
}

/// Collects the invalid fields of one request.
#[derive(Default)]
pub struct Checks(Vec<Detail>);

impl Checks {
    pub fn add(&mut self, property: impl Into<String>, code: &'static str, message: impl Into<String>) {
        self.0.push(Detail::new(property, code, message));
    }

    /// Ok when every field passed.
    pub fn finish(self) -> Result<(), Error> {
        if self.0.is_empty() { Ok(()) } else { Err(Error::Invalid(self.0)) }
    }

    /// An E.164 number that is a valid number of its country.
    pub fn msisdn(&mut self, property: &str, v: Option<&str>) {
        let Some(v) = v else { return };
        let valid = phonenumber::parse(None, v).map(|n| phonenumber::is_valid(&n)).unwrap_or(false);
        if !valid {
            self.add(property, "invalid_msisdn", "must be a valid E.164 phone number");
        }
    }

    pub fn country(&mut self, property: &str, v: &str) {
        if isocountry::CountryCode::for_alpha2(v).is_err() {
            self.add(property, "invalid_country", "must be an ISO 3166-1 alpha-2 country code");
        }
    }

    /// A BCP 47 language tag whose subtags the IANA registry holds, in an
    /// order RFC 5646 allows (no variant or extension twice): `sv-SE`,
    /// `zh-Hant-TW`, `ca-ES-valencia`; not `sv-QQQ` nor `jqq-SE` (private-use
    /// subtags, `sv-XA` or `qaa`, are valid BCP 47).
    pub fn locale(&mut self, property: &str, v: &str) {
        let valid = language_tags::LanguageTag::parse(v).is_ok_and(|tag| tag.validate().is_ok());
        if !valid {
            self.add(property, "invalid_locale", "must be a BCP 47 language tag of registered subtags, such as sv-SE or zh-Hant-TW");
        }
    }

    pub fn currency(&mut self, property: &str, v: &str) {
        if iso_currency::Currency::from_code(v).is_none() {
            self.add(property, "invalid_currency", "must be an ISO 4217 currency code");
        }
    }

    pub fn address(&mut self, property: &str, a: &Address) {
        self.country(&format!("{property}.country"), &a.country);
        if a.country == "US" {
            let zip = a.zip.as_bytes();
            let ok = match zip.len() {
                5 => zip.iter().all(u8::is_ascii_digit),
                10 => zip[..5].iter().all(u8::is_ascii_digit) && zip[5] == b'-' && zip[6..].iter().all(u8::is_ascii_digit),
                _ => false,
            };
            if !ok {
                self.add(format!("{property}.zip"), "invalid_zip", "a US ZIP code is 12345 or 12345-6789");
            }
        }
    }

    pub fn contact(&mut self, c: &CustomerContact) {
        self.msisdn("contact.msisdn", c.msisdn.as_deref());
    }

    pub fn shipping(&mut self, s: &Shipping) {
        self.msisdn("shipping.msisdn", s.msisdn.as_deref());
        self.address("shipping.address", &s.address);
    }

    /// Billing rules: EMAIL_INVOICE needs an email, PAPER_INVOICE an
    /// address, autoPay a default payment profile.
    pub fn billing(&mut self, b: &CustomerBilling) {
        self.currency("billing.currency", &b.currency);
        if let Some(a) = &b.address {
            self.address("billing.address", a);
        }
        match b.method {
            BillingMethod::EmailInvoice if b.email.is_none() => self.add("billing.email", "required", "is required when method is EMAIL_INVOICE"),
            BillingMethod::PaperInvoice if b.address.is_none() => self.add("billing.address", "required", "is required when method is PAPER_INVOICE"),
            _ => {}
        }
        if b.auto_pay && b.default_payment_profile_id.is_none() {
            self.add("billing.defaultPaymentProfileId", "required", "is required when autoPay is true");
        }
    }
}

/// SIM card numbers (ICCID, ITU-T E.118): 19 or 20 digits starting with
/// 89 (telecommunications), the last a Luhn check digit. The schema's
/// pattern checks the shape; this checks the digit.
pub mod iccid {
    pub fn valid(iccid: &str) -> bool {
        (19..=20).contains(&iccid.len()) && iccid.starts_with("89") && iccid.bytes().all(|b| b.is_ascii_digit()) && luhn::valid(iccid)
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn generated_iccids_are_valid_and_a_wrong_digit_is_not() {
            for _ in 0..100 {
                let i = crate::network::new_iccid();
                assert!(super::valid(&i), "{i}");
                let last = i.as_bytes()[18];
                let wrong = format!("{}{}", &i[..18], char::from(b'0' + (last - b'0' + 1) % 10));
                assert!(!super::valid(&wrong), "{wrong}");
            }
            assert!(super::valid(crate::network::REFUSED[1]));
        }
    }
}
