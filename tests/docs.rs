//! README.md and the pages of docs/: every relative link names a file
//! that exists (a page moved or renamed breaks no link unseen).

use std::path::{Path, PathBuf};

/// The relative link targets of a Markdown text (`[text](target)`), without
/// their `#anchor`; web addresses and bare anchors are not files.
fn relative_links(text: &str) -> Vec<String> {
    let mut links = vec![];
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = rest[..end].split('#').next().unwrap_or("");
            if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
                links.push(target.to_string());
            }
            rest = &rest[end..];
        }
    }
    links
}

fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    pages
}

#[test]
fn every_relative_link_resolves() {
    let mut broken = vec![];
    let mut seen = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for link in relative_links(&text) {
            seen += 1;
            if !page.parent().unwrap().join(&link).exists() {
                broken.push(format!("{}: {link}", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "links to nothing:\n{}", broken.join("\n"));
    assert!(seen >= 13, "the README links each page of docs/ ({seen} links seen)");
}

#[test]
fn the_readme_links_every_page_of_docs_and_stays_short() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let linked = relative_links(&readme);
    for page in pages().iter().filter(|p| p.parent().unwrap().ends_with("docs")) {
        let name = format!("docs/{}", page.file_name().unwrap().to_str().unwrap());
        assert!(linked.contains(&name), "README.md does not link {name}");
    }
    assert!(readme.lines().count() <= 300, "README.md is for a newcomer: at most about 300 lines");
}

#[test]
fn a_link_is_found_outside_code_and_without_its_anchor() {
    let text = "see [a](docs/a.md#part) and [b](https://example.com)\n```\n[c](c.md)\n```\n[d](d.md)";
    assert_eq!(relative_links(text), ["docs/a.md", "d.md"]);
}
