//! The sandbox providers' test values: which card or account number pays,
//! declines, asks for authentication or fails later, and the checks a
//! hosted page makes of what a person typed (a card number's Luhn digit,
//! an expiry in the future, a three-digit CVC, an IBAN's check digits).
//! The payment documents and their docs page are to list the same values
//! (issue 37).

use super::{Invalid, MethodKind};
use chrono::NaiveDate;

/// What the sandbox does with a method, chosen by its test value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// every charge succeeds
    Succeeds,
    /// every charge is declined with this code
    Declines(&'static str),
    /// a charge the person makes asks them to authenticate first; once the
    /// method is saved, charges without them succeed
    Authenticates,
    /// saves, and a charge the person makes succeeds; every later charge
    /// without them (off-session) is declined
    FailsOffSession,
    /// a SEPA debit: PROCESSING, then SUCCEEDED when it settles
    Settles,
    /// a SEPA debit: PROCESSING, then failed when it settles
    FailsAfterProcessing,
}

impl Behaviour {
    pub fn as_str(self) -> &'static str {
        match self {
            Behaviour::Succeeds => "succeeds",
            Behaviour::Declines(code) => code,
            Behaviour::Authenticates => "authenticates",
            Behaviour::FailsOffSession => "fails_off_session",
            Behaviour::Settles => "settles",
            Behaviour::FailsAfterProcessing => "fails_after_processing",
        }
    }

    pub fn parse(s: &str) -> Option<Behaviour> {
        Some(match s {
            "succeeds" => Behaviour::Succeeds,
            "insufficient_funds" => Behaviour::Declines(INSUFFICIENT_FUNDS),
            "card_declined" => Behaviour::Declines(CARD_DECLINED),
            "authenticates" => Behaviour::Authenticates,
            "fails_off_session" => Behaviour::FailsOffSession,
            "settles" => Behaviour::Settles,
            "fails_after_processing" => Behaviour::FailsAfterProcessing,
            _ => return None,
        })
    }
}

/// Failure codes a charge reports (`charges[].failureCode`).
pub const CARD_DECLINED: &str = "card_declined";
pub const INSUFFICIENT_FUNDS: &str = "insufficient_funds";
pub const AUTHENTICATION_FAILED: &str = "authentication_failed";
pub const DEBIT_FAILED: &str = "debit_failed";

/// The test cards, as the page's person types them (spaces allowed).
pub const CARDS: &[(&str, Behaviour)] = &[
    ("4242424242424242", Behaviour::Succeeds),
    ("4000000000000002", Behaviour::Declines(CARD_DECLINED)),
    ("4000000000009995", Behaviour::Declines(INSUFFICIENT_FUNDS)),
    ("4000002500003155", Behaviour::Authenticates),
    ("4000000000000341", Behaviour::FailsOffSession),
];

/// The test accounts for SEPA debits (PROVIDER_2).
pub const IBANS: &[(&str, Behaviour)] = &[("DE89370400440532013000", Behaviour::Settles), ("DE62370400440532013001", Behaviour::FailsAfterProcessing)];

/// A method checked and recognised: what the sandbox keeps of it (never
/// the whole number).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recognised {
    pub kind: MethodKind,
    pub behaviour: Behaviour,
    /// what a person sees of it, e.g. "Visa •••• 4242"
    pub display_name: String,
    /// a card's last valid day (the end of its expiry month)
    pub expires_on: Option<NaiveDate>,
}

fn invalid(field: &'static str, message: &str) -> Invalid {
    Invalid { field, message: message.into() }
}

/// Digits of `typed` without the spaces and dashes people type in card
/// numbers; None when anything else is there.
fn digits(typed: &str) -> Option<String> {
    let s: String = typed.chars().filter(|c| !matches!(c, ' ' | '-')).collect();
    (!s.is_empty() && s.chars().all(|c| c.is_ascii_digit())).then_some(s)
}

/// The card's brand, by its number's first digits.
fn brand(number: &str) -> &'static str {
    let two: u32 = number.get(..2).and_then(|p| p.parse().ok()).unwrap_or(0);
    let four: u32 = number.get(..4).and_then(|p| p.parse().ok()).unwrap_or(0);
    match (two, four) {
        (40..=49, _) => "Visa",
        (51..=55, _) | (_, 2221..=2720) => "Mastercard",
        (34 | 37, _) => "American Express",
        _ => "Card",
    }
}

/// The last day a card with expiry `MM/YY` (or `MM/YYYY`) is valid.
fn expiry(typed: &str) -> Option<NaiveDate> {
    let (month, year) = typed.trim().split_once('/')?;
    let (month, year) = (month.trim(), year.trim());
    if !(month.len() <= 2 && month.chars().chain(year.chars()).all(|c| c.is_ascii_digit())) {
        return None;
    }
    let month: u32 = month.parse().ok()?;
    let year: i32 = match year.len() {
        2 => 2000 + year.parse::<i32>().ok()?,
        4 => year.parse().ok()?,
        _ => return None,
    };
    if !(1..=12).contains(&month) {
        return None;
    }
    let first_of_next = if month == 12 { NaiveDate::from_ymd_opt(year + 1, 1, 1) } else { NaiveDate::from_ymd_opt(year, month + 1, 1) };
    first_of_next?.pred_opt()
}

/// A card as typed on a page, checked on `today` (the organisation's
/// date): a number that fails its check digit, an expiry past or
/// malformed, a CVC not of three digits, or a number that is no test card
/// (a sandbox takes no real card) is refused with a sentence for the page.
pub fn card(number: &str, expiry_typed: &str, cvc: &str, today: NaiveDate) -> Result<Recognised, Invalid> {
    let number = digits(number).filter(|n| (12..=19).contains(&n.len())).ok_or_else(|| invalid("cardNumber", "Enter the card number: 12 to 19 digits."))?;
    if !luhn::valid(&number) {
        return Err(invalid("cardNumber", "This card number is not valid: check it for a mistyped digit."));
    }
    let expires_on = expiry(expiry_typed).ok_or_else(|| invalid("expiry", "Enter the expiry as MM/YY."))?;
    if expires_on < today {
        return Err(invalid("expiry", "This card has expired."));
    }
    if !(cvc.len() == 3 && cvc.chars().all(|c| c.is_ascii_digit())) {
        return Err(invalid("cvc", "Enter the three-digit security code (CVC)."));
    }
    let Some(&(_, behaviour)) = CARDS.iter().find(|(n, _)| *n == number) else {
        return Err(invalid("cardNumber", "This is a sandbox: use one of its test cards (4242 4242 4242 4242 pays)."));
    };
    let last4 = &number[number.len() - 4..];
    let display_name = format!("{} •••• {last4}", brand(&number));
    Ok(Recognised { kind: MethodKind::Card, behaviour, display_name, expires_on: Some(expires_on) })
}

/// An account for a SEPA debit as typed on a page (spaces allowed,
/// letters in either case): refused unless its check digits hold and it is
/// one of the test accounts.
pub fn iban(typed: &str) -> Result<Recognised, Invalid> {
    let compact: String = typed.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_ascii_uppercase();
    let parsed: iban::Iban = compact.parse().map_err(|_| invalid("iban", "This IBAN is not valid: check it for a mistyped character."))?;
    let electronic = iban::IbanLike::electronic_str(&parsed);
    let Some(&(_, behaviour)) = IBANS.iter().find(|(n, _)| *n == electronic) else {
        return Err(invalid("iban", "This is a sandbox: use one of its test accounts (DE89 3704 0044 0532 0130 00 settles)."));
    };
    let last4 = &electronic[electronic.len() - 4..];
    Ok(Recognised { kind: MethodKind::SepaDebit, behaviour, display_name: format!("SEPA Debit •••• {last4}"), expires_on: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn every_test_card_is_recognised_with_its_behaviour() {
        let today = day(2026, 11, 28);
        for (number, behaviour) in CARDS {
            let spaced: String = number.as_bytes().chunks(4).map(|c| std::str::from_utf8(c).unwrap()).collect::<Vec<_>>().join(" ");
            let got = card(&spaced, "12/30", "123", today).unwrap();
            assert_eq!(got.behaviour, *behaviour);
            assert_eq!(got.display_name, format!("Visa •••• {}", &number[12..]));
            assert_eq!(got.expires_on, Some(day(2030, 12, 31)));
            assert_eq!(Behaviour::parse(behaviour.as_str()), Some(*behaviour));
        }
    }

    #[test]
    fn a_card_is_refused_for_each_field_that_is_wrong() {
        let today = day(2026, 11, 28);
        let field = |n: &str, e: &str, c: &str| card(n, e, c, today).unwrap_err().field;
        assert_eq!(field("4242 4242 4242 4241", "12/30", "123"), "cardNumber");
        assert_eq!(field("4242 abcd", "12/30", "123"), "cardNumber");
        assert_eq!(field("5555555555554444", "12/30", "123"), "cardNumber", "a real-looking card is no test card");
        assert_eq!(field("4242424242424242", "10/26", "123"), "expiry");
        assert_eq!(field("4242424242424242", "13/30", "123"), "expiry");
        assert_eq!(field("4242424242424242", "1230", "123"), "expiry");
        assert_eq!(field("4242424242424242", "+1/30", "123"), "expiry");
        assert_eq!(field("4242424242424242", "001/30", "123"), "expiry");
        assert_eq!(field("4242424242424242", "12/30", "12"), "cvc");
        assert_eq!(field("4242424242424242", "12/30", "12a"), "cvc");
        // valid through the last day of its month
        assert!(card("4242424242424242", "11/26", "123", today).is_ok());
        assert!(card("4242424242424242", "11/2026", "123", day(2026, 11, 30)).is_ok());
        assert!(card("4242424242424242", "11/26", "123", day(2026, 12, 1)).is_err());
    }

    #[test]
    fn the_test_accounts_are_recognised_and_others_refused() {
        let settles = iban("de89 3704 0044 0532 0130 00").unwrap();
        assert_eq!((settles.kind, settles.behaviour), (MethodKind::SepaDebit, Behaviour::Settles));
        assert_eq!(settles.display_name, "SEPA Debit •••• 3000");
        assert_eq!(iban("DE62 3704 0044 0532 0130 01").unwrap().behaviour, Behaviour::FailsAfterProcessing);
        assert_eq!(iban("DE89 3704 0044 0532 0130 01").unwrap_err().field, "iban", "check digits");
        assert!(iban("DE44 5001 0517 5407 3249 31").unwrap_err().message.contains("sandbox"));
    }
}
