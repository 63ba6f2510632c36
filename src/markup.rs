//! Text made safe to place in HTML (the hosted pages) and XML (an
//! invoice's document): the characters markup gives a meaning escaped;
//! and the headers every HTML page carries.

/// `text` with `& < > " '` escaped, and the control characters XML 1.0
/// cannot carry at all left out (a tab and line breaks stay).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {}
            c => out.push(c),
        }
    }
    out
}

/// What a page's forms do, for its `form-action`.
#[derive(Debug, Clone, Copy)]
pub enum Forms {
    /// it has none: `form-action 'none'`
    None,
    /// its form is answered by a redirect to the seller's `returnUrl`,
    /// which `form-action` would govern: left out
    Redirect,
}

/// The headers of every HTML page the server answers (the reference pages,
/// the hosted pages): nobody caches, frames, sniffs or is referred from it
/// (a hosted page's token is in its URL), and it may load nothing from
/// anywhere, run no script and set no base.
pub fn page_headers(builder: http::response::Builder, forms: Forms) -> http::response::Builder {
    let policy = match forms {
        Forms::Redirect => "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
        Forms::None => "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    };
    builder
        .header(http::header::CONTENT_TYPE, "text/html; charset=utf-8")
        .header(http::header::CACHE_CONTROL, "no-store")
        .header("referrer-policy", "no-referrer")
        .header("x-frame-options", "DENY")
        .header("x-content-type-options", "nosniff")
        .header("content-security-policy", policy)
}

#[cfg(test)]
mod tests {
    #[test]
    fn what_markup_means_is_escaped() {
        assert_eq!(super::escape("A&B <x> \"q\" 'a'\u{1}\n"), "A&amp;B &lt;x&gt; &quot;q&quot; &#39;a&#39;\n");
    }
}
