//! Text made safe to place in HTML (the hosted pages) and XML (an
//! invoice's document): the characters markup gives a meaning escaped.

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

#[cfg(test)]
mod tests {
    #[test]
    fn what_markup_means_is_escaped() {
        assert_eq!(super::escape("A&B <x> \"q\" 'a'\u{1}\n"), "A&amp;B &lt;x&gt; &quot;q&quot; &#39;a&#39;\n");
    }
}
