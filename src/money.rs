//! Money: integer minor units, and their major-unit twins by the currency's
//! own ISO 4217 exponent (JPY 0 decimals, SEK 2, BHD 3).

/// The largest amount a price or discount may hold, in minor units. It keeps
/// every order total (100 lines, 60 upfront cycles, taxes) below 10^15, where
/// an f64 still names every integer and every decimal with 15 significant
/// digits, so major units are exact.
pub const MAX_MINOR: i64 = 10_000_000_000;

/// Decimal places of an ISO 4217 currency; None for unknown codes and for
/// codes without minor units (XAU, XXX), which cannot price anything.
pub fn exponent(currency: &str) -> Option<u32> {
    iso_currency::Currency::from_code(currency).and_then(|c| c.exponent()).map(u32::from)
}

/// `minor` in major units. The division is exact for amounts below 10^15:
/// both operands are exact doubles and IEEE division rounds to the nearest
/// double, whose shortest decimal form is the exact quotient.
pub fn major(minor: i64, currency: &str) -> f64 {
    let e = exponent(currency).unwrap_or(2);
    minor as f64 / 10f64.powi(e as i32)
}

/// `minor` as a decimal with the currency's places, as invoices and their
/// documents show it: 24875 SEK is "248.75", 500 JPY "500".
pub fn decimal(minor: i64, currency: &str) -> String {
    let places = exponent(currency).unwrap_or(2);
    if places == 0 {
        return minor.to_string();
    }
    let (sign, abs, unit) = (if minor < 0 { "-" } else { "" }, minor.unsigned_abs(), 10u64.pow(places));
    format!("{sign}{}.{:0width$}", abs / unit, abs % unit, width = places as usize)
}

#[cfg(test)]
mod tests {
    #[test]
    fn decimals_have_the_currencys_places() {
        assert_eq!(super::decimal(24875, "SEK"), "248.75");
        assert_eq!(super::decimal(5, "SEK"), "0.05");
        assert_eq!(super::decimal(-1200, "EUR"), "-12.00");
        assert_eq!(super::decimal(500, "JPY"), "500");
        assert_eq!(super::decimal(1234, "BHD"), "1.234");
    }

    use super::*;

    #[test]
    fn exponents_follow_iso_4217() {
        assert_eq!(exponent("JPY"), Some(0));
        assert_eq!(exponent("SEK"), Some(2));
        assert_eq!(exponent("BHD"), Some(3));
        assert_eq!(exponent("XAU"), None);
        assert_eq!(exponent("ZZZ"), None);
    }

    #[test]
    fn major_units_are_exact_decimals() {
        assert_eq!(major(29900, "SEK").to_string(), "299");
        assert_eq!(major(12345, "SEK").to_string(), "123.45");
        assert_eq!(major(12345, "JPY").to_string(), "12345");
        assert_eq!(major(12345, "BHD").to_string(), "12.345");
        assert_eq!(major(1, "BHD").to_string(), "0.001");
        assert_eq!(major(999_999_999_999_999, "SEK").to_string(), "9999999999999.99");
    }
}
