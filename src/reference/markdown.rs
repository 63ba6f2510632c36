//! The documents' descriptions, which are Markdown, as HTML: raw HTML in
//! them shown as text, images as their text, links only to where a link may go.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd, html};

/// `text` (CommonMark with tables) as HTML; nothing in it reaches the page
/// as markup it did not come from Markdown's own syntax.
pub fn markdown(text: &str) -> String {
    // (per link open: whether it was kept, so its end matches)
    let mut link_stack: Vec<bool> = vec![];
    let events = Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).filter_map(|event| match event {
        // raw HTML is text here: the page would otherwise carry whatever
        // a description says, scripts and outside loads included
        Event::Html(raw) | Event::InlineHtml(raw) => Some(Event::Text(raw)),
        Event::Start(Tag::HtmlBlock) => Some(Event::Start(Tag::Paragraph)),
        Event::End(TagEnd::HtmlBlock) => Some(Event::End(TagEnd::Paragraph)),
        // an image would be a load from wherever it points: its text instead
        Event::Start(Tag::Image { .. }) | Event::End(TagEnd::Image) => None,
        Event::Start(Tag::Link { ref dest_url, .. }) => {
            let kept = linkable(dest_url);
            link_stack.push(kept);
            kept.then_some(event)
        }
        Event::End(TagEnd::Link) => match link_stack.pop() {
            Some(true) => Some(event),
            _ => None,
        },
        e => Some(e),
    });
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    html::push_html(&mut out, events);
    // a wide table (a state table) scrolls in its own box, not the page
    if out.contains("<table>") { format!("<div class=\"wide\">{out}</div>") } else { out }
}

/// A link may go to an anchor of the page, a path of this server, or a
/// web or mail address; anything else (`javascript:`, `data:`) stays text.
fn linkable(url: &str) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    ["#", "/", "https://", "http://", "mailto:"].iter().any(|p| lower.starts_with(p)) && !lower.starts_with("//")
}

#[cfg(test)]
mod tests {
    use super::markdown;

    #[test]
    fn markdown_is_rendered() {
        assert_eq!(markdown("A `code` and **bold**."), "<p>A <code>code</code> and <strong>bold</strong>.</p>\n");
        let table = markdown("| a | b |\n|---|---|\n| 1 | 2 |\n");
        assert!(table.contains("<table>") && table.contains("<td>1</td>"), "{table}");
    }

    #[test]
    fn raw_html_is_escaped() {
        let html = markdown("Hi <script>alert(1)</script> and <img src=\"https://x.example/a.png\">\n\n<div onclick=\"x()\">block</div>\n");
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("<div"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(html.contains("&lt;div onclick="), "{html}");
    }

    #[test]
    fn images_are_their_text_and_odd_links_text() {
        let html = markdown("![a diagram](https://x.example/d.png) [go](javascript:alert(1)) [page](#op-x)");
        assert!(!html.contains("<img") && html.contains("a diagram"), "{html}");
        assert!(!html.contains("javascript:") && html.contains("go"), "{html}");
        assert!(html.contains("<a href=\"#op-x\">page</a>"), "{html}");
    }
}
