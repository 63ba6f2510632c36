//! The hosted payment page's HTML: one self-contained document per state
//! (no script, no outside resource), every text escaped.

use crate::domain::payments::render::IntentLine;
use crate::payment_providers::{MethodKind, ProviderName};

/// What the page shows about the payment asked for.
pub struct Shown {
    pub organisation: String,
    pub description: Option<String>,
    pub lines: Vec<IntentLine>,
    pub amount_minor: i64,
    pub currency: String,
    pub locale: String,
    pub provider: ProviderName,
    pub cancel_url: Option<String>,
    /// the saved method the link offers first ("Visa •••• 4242")
    pub saved: Option<String>,
}

/// What the body of the page is.
pub enum Body<'a> {
    /// the form, with a sentence above it (a decline, a refused field)
    Form { notice: Option<&'a str> },
    /// the authentication step of a card that asks for it
    Authenticate,
    /// a sentence and no form (paid, processing, closed)
    Message { title: &'a str, text: &'a str },
    /// a sentence, no form, and the way back to the seller: a page that
    /// took all its attempts
    Spent { text: &'a str },
}

pub use crate::markup::escape;

/// Languages that write 1 234,50 rather than 1,234.50.
const DECIMAL_COMMA: &[&str] = &["sv", "de", "fr", "es", "it", "nl", "fi", "da", "nb", "no", "pt", "pl", "cs", "ru"];

/// `minor` in `currency`'s major units, as `locale` writes numbers.
pub fn amount(minor: i64, currency: &str, locale: &str) -> String {
    let exponent = crate::money::exponent(currency).unwrap_or(2);
    let scale = 10i64.pow(exponent);
    let (whole, part) = (minor.abs() / scale, minor.abs() % scale);
    let comma = DECIMAL_COMMA.contains(&locale.split(['-', '_']).next().unwrap_or_default());
    let digits = whole.to_string();
    let mut grouped = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(if comma { '\u{a0}' } else { ',' });
        }
        grouped.push(d);
    }
    let sign = if minor < 0 { "-" } else { "" };
    let fraction = if exponent == 0 { String::new() } else { format!("{}{:0width$}", if comma { ',' } else { '.' }, part, width = exponent as usize) };
    if comma { format!("{sign}{grouped}{fraction}\u{a0}{currency}") } else { format!("{currency}\u{a0}{sign}{grouped}{fraction}") }
}

pub(super) const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem;color:#222}\
table{width:100%;border-collapse:collapse}td{padding:.25rem 0}td.amount{text-align:right}tr.total td{border-top:1px solid #999;font-weight:bold}\
label{display:block;margin-top:.75rem}input{width:100%;padding:.4rem;font-size:1rem;box-sizing:border-box}\
button{margin-top:1rem;padding:.6rem 1.2rem;font-size:1rem}.notice{background:#fee;border:1px solid #c66;padding:.5rem}\
.sandbox{color:#666;font-size:.85rem}";

fn lines(shown: &Shown) -> String {
    let mut rows = String::new();
    for l in &shown.lines {
        rows.push_str(&format!(
            "<tr><td>{}</td><td class=\"amount\">{}</td></tr>",
            escape(&l.description),
            escape(&amount(l.amount_minor, &shown.currency, &shown.locale))
        ));
        for (d, a) in &l.discounts {
            rows.push_str(&format!(
                "<tr><td>&nbsp;&nbsp;{}</td><td class=\"amount\">{}</td></tr>",
                escape(d),
                escape(&amount(-a, &shown.currency, &shown.locale))
            ));
        }
        for (t, a) in &l.taxes {
            rows.push_str(&format!(
                "<tr><td>&nbsp;&nbsp;{}</td><td class=\"amount\">{}</td></tr>",
                escape(t),
                escape(&amount(*a, &shown.currency, &shown.locale))
            ));
        }
    }
    let total = amount(shown.amount_minor, &shown.currency, &shown.locale);
    rows.push_str(&format!("<tr class=\"total\"><td>Total</td><td class=\"amount\" id=\"total\">{}</td></tr>", escape(&total)));
    format!("<table>{rows}</table>")
}

/// A sentence above a form (a decline, a refused field).
pub fn notice(text: Option<&str>) -> String {
    text.map(|n| format!("<p class=\"notice\" id=\"notice\">{}</p>", escape(n))).unwrap_or_default()
}

/// The page's link back to where the payer came from.
/// The title of a page that took all its attempts.
pub const SPENT_TITLE: &str = "No further attempts";

pub fn cancel_link(url: Option<&str>) -> String {
    url.map(|u| format!("<p><a href=\"{}\">Cancel</a></p>", escape(u))).unwrap_or_default()
}

/// A method's fields: the card's, and an IBAN's at a provider that takes
/// SEPA debits (`sepa`: the sentence before it).
pub fn method_fields(provider: ProviderName, sepa: &str) -> String {
    let iban = if provider.takes(MethodKind::SepaDebit) {
        format!(
            "<p>{sepa} (leave the card fields empty):</p><label>IBAN<input name=\"iban\" autocomplete=\"off\" placeholder=\"DE89 3704 0044 0532 0130 00\"></label>"
        )
    } else {
        String::new()
    };
    format!(
        "<label>Card number<input name=\"cardNumber\" inputmode=\"numeric\" autocomplete=\"cc-number\" placeholder=\"4242 4242 4242 4242\"></label>\
         <label>Expiry (MM/YY)<input name=\"expiry\" autocomplete=\"cc-exp\" placeholder=\"12/30\"></label>\
         <label>CVC<input name=\"cvc\" inputmode=\"numeric\" autocomplete=\"cc-csc\" placeholder=\"123\"></label>{iban}"
    )
}

/// The authentication step a card asks for: approve or fail (`what`: what
/// the bank asks to confirm).
pub fn authenticate(what: &str) -> String {
    format!(
        "<p>Your bank asks you to confirm {what}.</p>\
         <form method=\"post\"><input type=\"hidden\" name=\"action\" value=\"approve\"><button type=\"submit\" id=\"approve\">Approve</button></form>\
         <form method=\"post\"><input type=\"hidden\" name=\"action\" value=\"fail\"><button type=\"submit\" id=\"fail\">Fail authentication</button></form>"
    )
}

fn form(shown: &Shown, notice_text: Option<&str>) -> String {
    let saved = shown.saved.as_deref().map(|s| {
        format!(
            "<form method=\"post\"><input type=\"hidden\" name=\"action\" value=\"saved\"><button type=\"submit\" id=\"saved\">Pay with {}</button></form><p>Or enter another:</p>",
            escape(s)
        )
    });
    format!(
        "{}{}<form method=\"post\"><input type=\"hidden\" name=\"action\" value=\"pay\">{}<button type=\"submit\" id=\"pay\">Pay {}</button></form>{}",
        notice(notice_text),
        saved.unwrap_or_default(),
        method_fields(shown.provider, "Or pay by SEPA direct debit"),
        escape(&amount(shown.amount_minor, &shown.currency, &shown.locale)),
        cancel_link(shown.cancel_url.as_deref()),
    )
}

/// The whole page.
pub fn render(shown: &Shown, body: Body<'_>) -> String {
    // the organisation is named in the title of the form, else beneath it
    let (title, named) = match &body {
        Body::Message { title, .. } => (title.to_string(), format!("<p>{}</p>", escape(&shown.organisation))),
        Body::Spent { .. } => (SPENT_TITLE.to_string(), format!("<p>{}</p>", escape(&shown.organisation))),
        _ => (format!("Pay {}", shown.organisation), String::new()),
    };
    let main = match body {
        Body::Form { notice } => form(shown, notice),
        Body::Authenticate => authenticate("this payment"),
        Body::Message { text, .. } => format!("<p id=\"message\">{}</p>", escape(text)),
        Body::Spent { text } => format!("<p id=\"message\">{}</p>{}", escape(text), cancel_link(shown.cancel_url.as_deref())),
    };
    let description = shown.description.as_deref().map(|d| format!("<p>{}</p>", escape(d))).unwrap_or_default();
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body><h1>{}</h1>{named}{description}{}{main}\
         <p class=\"sandbox\">Paid through {} (sandbox: use the test values of the documentation).</p></body></html>",
        escape(&title),
        escape(&title),
        lines(shown),
        shown.provider.as_str()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_read_as_the_locale_writes_them() {
        assert_eq!(amount(123456, "SEK", "sv-SE"), "1\u{a0}234,56\u{a0}SEK");
        assert_eq!(amount(123456, "USD", "en-US"), "USD\u{a0}1,234.56");
        assert_eq!(amount(500, "JPY", "en-US"), "JPY\u{a0}500");
        assert_eq!(amount(-250, "EUR", "de-DE"), "-2,50\u{a0}EUR");
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(escape("<b>\"A&B\"</b>"), "&lt;b&gt;&quot;A&amp;B&quot;&lt;/b&gt;");
    }
}
