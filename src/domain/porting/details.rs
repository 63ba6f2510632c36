//! What a port-in's details must be: the form of the number's country (the
//! US or Sweden; any other is refused), each field checked as its losing
//! carrier would (a Swedish identity's check digit).

use crate::error::{Detail, Error, Result};
use serde_json::Value;

/// The countries whose losing carriers Switchboard can port from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Country {
    Us,
    Sweden,
}

/// The country of `msisdn`, if a port from it is possible (400, detail
/// `porting_country_unsupported` on `field`, otherwise).
pub fn country_of(msisdn: &str, field: &str) -> Result<Country> {
    let region = phonenumber::parse(None, msisdn).ok().filter(phonenumber::is_valid).and_then(|n| n.country().id());
    match region {
        Some(phonenumber::country::Id::US) => Ok(Country::Us),
        Some(phonenumber::country::Id::SE) => Ok(Country::Sweden),
        _ => Err(Error::invalid(field, "porting_country_unsupported", "must be a valid US or Swedish number: only those can be ported here")),
    }
}

/// Whether `identity` is a Swedish personnummer (YYYYMMDD-NNNN or
/// YYMMDD-NNNN, `+` for someone over 100; a samordningsnummer's day is
/// 60 more) or organisationsnummer (NNNNNN-NNNN, its third digit 2 or
/// more), its last digit the Luhn check digit of the ten.
pub fn swedish_identity(identity: &str) -> bool {
    // (every valid identity is ASCII; the split below counts bytes, and
    // anything else could split a character)
    if !identity.is_ascii() {
        return false;
    }
    let (head, tail) = match identity.find(['-', '+']) {
        Some(i) => (&identity[..i], &identity[i + 1..]),
        None if identity.len() >= 4 => identity.split_at(identity.len() - 4),
        None => return false,
    };
    if tail.len() != 4 || !(head.len() == 6 || head.len() == 8) || !format!("{head}{tail}").bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let ten = format!("{}{tail}", &head[head.len() - 6..]);
    let digit = |i: usize| u32::from(ten.as_bytes()[i] - b'0');
    let organisation = head.len() == 6 && digit(2) >= 2;
    if !organisation {
        let (month, day) = (digit(2) * 10 + digit(3), digit(4) * 10 + digit(5));
        let day = if day > 60 { day - 60 } else { day };
        if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
            return false;
        }
    }
    luhn::valid(&ten)
}

/// The details of a port-in of `msisdn`, checked for its country (400 with
/// a detail per failing field, under `field`). As stored.
pub fn check(msisdn: &str, msisdn_field: &str, mut details: Value, field: &str) -> Result<Value> {
    let country = country_of(msisdn, msisdn_field)?;
    // what the details show of their secrets is the server's to say
    if let Some(object) = details.as_object_mut() {
        for shown in crate::store::PORT_IN_SHOWN_FIELDS {
            object.remove(shown);
        }
    }
    let has = |name: &str| details.get(name).is_some();
    let mut bad = vec![];
    match country {
        Country::Us => {
            if has("identity") {
                bad.push(Detail::new(format!("{field}.identity"), "not_allowed", "is for a Swedish number; a US number takes the US form"));
            }
            for name in ["firstName", "lastName", "address"] {
                if !has(name) {
                    bad.push(Detail::new(format!("{field}.{name}"), "required", "is required for a US number"));
                }
            }
        }
        Country::Sweden => {
            for name in ["firstName", "lastName", "address", "accountNumber", "passcode"] {
                if has(name) {
                    bad.push(Detail::new(format!("{field}.{name}"), "not_allowed", "is for a US number; a Swedish number takes identity"));
                }
            }
            match details.get("identity").and_then(Value::as_str) {
                None => bad.push(Detail::new(format!("{field}.identity"), "required", "is required for a Swedish number")),
                Some(i) if !swedish_identity(i) => bad.push(Detail::new(
                    format!("{field}.identity"),
                    "invalid_identity",
                    "must be a personnummer (YYYYMMDD-NNNN or YYMMDD-NNNN) or organisationsnummer (NNNNNN-NNNN) with a valid check digit",
                )),
                Some(_) => {}
            }
        }
    }
    if bad.is_empty() { Ok(details) } else { Err(Error::Invalid(bad)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swedish_identities_need_their_check_digit() {
        for good in ["19900101-0017", "900101-0017", "9001010017", "556036-0793", "19900161-0014", "201212121212"] {
            assert!(swedish_identity(good), "{good}");
        }
        for bad in ["19900101-0018", "900101-001", "19901301-0017", "abc", "556036-0794", ""] {
            assert!(!swedish_identity(bad), "{bad}");
        }
    }

    /// Found by the fuzz target `swedish_identity`: the last four bytes of
    /// a text that is not ASCII were split off inside a character (a panic).
    #[test]
    fn an_identity_that_is_not_ascii_is_refused_without_a_panic() {
        for bad in ["９００１００１７", "１９９００１０１００１７", "19900101001７", "é0017", "900101-001é", "€"] {
            assert!(!swedish_identity(bad), "{bad}");
        }
    }

    #[test]
    fn only_us_and_swedish_numbers_are_ported() {
        assert_eq!(country_of("+46709876543", "msisdn").unwrap(), Country::Sweden);
        assert_eq!(country_of("+12025550123", "msisdn").unwrap(), Country::Us);
        assert!(country_of("+447700900123", "msisdn").is_err());
    }
}
