//! A statement's `$N` parameters in its text: renumbered, for SQLite's
//! batches of statements (`group`), or replaced by their values written as
//! PostgreSQL literals, for the statements PostgreSQL's transactions send
//! together (`pg_tx`), in their text or as a prepared statement's
//! parameters.

use crate::error::{Error, Result};
use sqlx::any::AnyTypeInfoKind;
use sqlx_core::any::AnyValueKind;
use std::fmt::Write;

/// Appends `sql` with each `$N` outside quotes replaced by what `each`
/// appends for N.
fn substitute(sql: &str, out: &mut String, mut each: impl FnMut(usize, &mut String) -> Result<()>) -> Result<()> {
    // `$`, digits and quotes are ASCII, so byte positions are char bounds
    let bytes = sql.as_bytes();
    let (mut copied, mut i) = (0, 0);
    let mut quote = None;
    while i < bytes.len() {
        match (quote, bytes[i]) {
            (Some(q), b) if b == q => quote = None,
            (None, b @ (b'\'' | b'"')) => quote = Some(b),
            (None, b'$') if bytes.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                let end = (i + 1..bytes.len()).find(|&j| !bytes[j].is_ascii_digit()).unwrap_or(bytes.len());
                let n: usize = sql[i + 1..end].parse().map_err(|_| Error::Database(format!("parameter {} out of range", &sql[i..end])))?;
                out.push_str(&sql[copied..i]);
                each(n, out)?;
                copied = end;
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out.push_str(&sql[copied..]);
    Ok(())
}

/// Appends `sql` with each `$N` outside quotes as `$(N + offset)`.
pub(super) fn renumber(sql: &str, offset: usize, out: &mut String) {
    if offset == 0 {
        out.push_str(sql);
        return;
    }
    substitute(sql, out, |n, out| {
        write!(out, "${}", n + offset).expect("writing to a String");
        Ok(())
    })
    .expect("statement text written by this crate");
}

/// Appends `sql` with each `$N` replaced by `args[N - 1]` as a PostgreSQL
/// literal of the type sqlx would have bound it as, so the statement means
/// what it meant with its parameters bound.
pub(super) fn inline(sql: &str, args: &[AnyValueKind], out: &mut String) -> Result<()> {
    substitute(sql, out, |n, out| {
        let value = n.checked_sub(1).and_then(|i| args.get(i)).ok_or_else(|| Error::Database(format!("no argument for ${n}")))?;
        literal(value, out)
    })
}

/// Appends `EXECUTE name(args...)`: the statement prepared as `name`
/// (`prepared`) run with `args` as its parameters, each a literal as
/// `inline` writes it.
pub(super) fn execute(name: &str, args: &[AnyValueKind], out: &mut String) -> Result<()> {
    out.push_str("EXECUTE ");
    out.push_str(name);
    out.push('(');
    for (i, value) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        literal(value, out)?;
    }
    out.push(')');
    Ok(())
}

/// `value` as a PostgreSQL literal. Text goes in an escape string
/// (`E'...'`), whose meaning does not depend on the server's
/// `standard_conforming_strings`: a backslash and a quote are doubled, so
/// nothing in a value can end the literal.
fn literal(value: &AnyValueKind, out: &mut String) -> Result<()> {
    let w = |r: std::fmt::Result| r.expect("writing to a String");
    match value {
        AnyValueKind::Null(kind) => w(write!(out, "NULL::{}", type_name(*kind))),
        AnyValueKind::Bool(b) => out.push_str(if *b { "TRUE" } else { "FALSE" }),
        // quoted, so a negative number is one literal, not a minus applied
        // to one (which overflows at the type's least value)
        AnyValueKind::SmallInt(i) => w(write!(out, "'{i}'::int2")),
        AnyValueKind::Integer(i) => w(write!(out, "'{i}'::int4")),
        AnyValueKind::BigInt(i) => w(write!(out, "'{i}'::int8")),
        AnyValueKind::Real(f) => w(write!(out, "'{}'::float4", float(f64::from(*f)))),
        AnyValueKind::Double(f) => w(write!(out, "'{}'::float8", float(*f))),
        AnyValueKind::Text(s) => text(s, out)?,
        AnyValueKind::TextSlice(s) => text(s, out)?,
        AnyValueKind::Blob(bytes) => {
            out.push_str("E'\\\\x");
            for b in bytes.iter() {
                w(write!(out, "{b:02x}"));
            }
            out.push_str("'::bytea");
        }
        other => return Err(Error::Database(format!("a value of a kind PostgreSQL literals do not cover: {other:?}"))),
    }
    Ok(())
}

fn text(s: &str, out: &mut String) -> Result<()> {
    if s.contains('\0') {
        // PostgreSQL's text holds no NUL (a bound one is refused too)
        return Err(Error::Database("a text value holds a NUL character".into()));
    }
    out.reserve(s.len() + 10);
    out.push_str("E'");
    for c in s.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push_str("'::text");
    Ok(())
}

fn float(f: f64) -> String {
    match f {
        f if f.is_nan() => "NaN".into(),
        f if f == f64::INFINITY => "Infinity".into(),
        f if f == f64::NEG_INFINITY => "-Infinity".into(),
        f => f.to_string(),
    }
}

fn type_name(kind: AnyTypeInfoKind) -> &'static str {
    match kind {
        AnyTypeInfoKind::Bool => "bool",
        AnyTypeInfoKind::SmallInt => "int2",
        AnyTypeInfoKind::Integer | AnyTypeInfoKind::Null => "int4",
        AnyTypeInfoKind::BigInt => "int8",
        AnyTypeInfoKind::Real => "float4",
        AnyTypeInfoKind::Double => "float8",
        AnyTypeInfoKind::Text => "text",
        AnyTypeInfoKind::Blob => "bytea",
    }
}

#[cfg(test)]
mod tests {
    use super::{execute, inline, renumber};
    use sqlx::any::AnyTypeInfoKind;
    use sqlx_core::any::AnyValueKind;
    use std::sync::Arc;

    #[test]
    fn renumbers_parameters_outside_quotes() {
        let mut out = String::new();
        renumber("UPDATE t SET a = $1, b = '$2', c = \"$3\" WHERE d = $12", 4, &mut out);
        assert_eq!(out, "UPDATE t SET a = $5, b = '$2', c = \"$3\" WHERE d = $16");
        out.clear();
        renumber("SELECT 'it''s $1', $1 || '$', $2", 10, &mut out);
        assert_eq!(out, "SELECT 'it''s $1', $11 || '$', $12");
    }

    #[test]
    fn inlines_values_as_literals_nothing_can_end() {
        let args = [
            AnyValueKind::Text(Arc::new("it's a \\' trap'); DROP TABLE t; --".into())),
            AnyValueKind::BigInt(i64::MIN),
            AnyValueKind::Null(AnyTypeInfoKind::Text),
            AnyValueKind::Bool(true),
            AnyValueKind::Double(f64::NAN),
            AnyValueKind::Blob(Arc::new(vec![0, 0xab])),
        ];
        let mut out = String::new();
        inline("INSERT INTO t VALUES ($1, $2, $3, '$4', $4, $5, $6)", &args, &mut out).unwrap();
        assert_eq!(
            out,
            "INSERT INTO t VALUES (E'it''s a \\\\'' trap''); DROP TABLE t; --'::text, '-9223372036854775808'::int8, NULL::text, '$4', TRUE, \
             'NaN'::float8, E'\\\\x00ab'::bytea)"
        );
        assert!(inline("SELECT $7", &args, &mut String::new()).is_err(), "a parameter without its argument");
        out.clear();
        execute("sb_1", &args[1..4], &mut out).unwrap();
        assert_eq!(out, "EXECUTE sb_1('-9223372036854775808'::int8, NULL::text, TRUE)");
        assert!(inline("SELECT $1", &[AnyValueKind::Text(Arc::new("a\0b".into()))], &mut String::new()).is_err());
    }
}

/// `inline` against PostgreSQL itself (the test database of
/// `SWITCHBOARD_TEST_POSTGRES`; skipped, saying so, without one): every
/// value kind the store binds, random text of every Unicode plane with
/// quotes, backslashes, `$$` and control characters, and a million
/// characters, written as `inline` writes them and read back, equal the
/// same values bound the ordinary way.
#[cfg(test)]
mod on_postgres {
    use super::inline;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    use sqlx::any::AnyTypeInfoKind;
    use sqlx::{AnyConnection, Connection, Row};
    use sqlx_core::any::AnyValueKind;
    use std::sync::Arc;

    fn database() -> Option<String> {
        let url = std::env::var("SWITCHBOARD_TEST_POSTGRES").ok().filter(|u| !u.is_empty());
        if url.is_none() {
            eprintln!("skipped: SWITCHBOARD_TEST_POSTGRES holds no PostgreSQL URL");
        }
        url
    }

    /// What `sql` (`SELECT` of one value) selects, as PostgreSQL's own text
    /// of its type and value (bytes in hex, floats exact, NULL as such).
    async fn read(conn: &mut AnyConnection, sql: String, bound: Option<AnyValueKind>) -> String {
        let sql = format!("SELECT pg_typeof(v)::text || ':' || COALESCE(v::text, 'NULL') AS shown FROM ({sql}) AS t(v)");
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
        match bound {
            Some(AnyValueKind::Text(s)) => q = q.bind(s.to_string()),
            Some(AnyValueKind::BigInt(i)) => q = q.bind(i),
            Some(AnyValueKind::Integer(i)) => q = q.bind(i),
            Some(AnyValueKind::SmallInt(i)) => q = q.bind(i),
            Some(AnyValueKind::Bool(b)) => q = q.bind(b),
            Some(AnyValueKind::Double(f)) => q = q.bind(f),
            Some(AnyValueKind::Real(f)) => q = q.bind(f),
            Some(AnyValueKind::Blob(b)) => q = q.bind(b.to_vec()),
            Some(AnyValueKind::Null(_)) => q = q.bind(None::<String>),
            Some(other) => panic!("no binding of {other:?}"),
            None => {}
        }
        q.fetch_one(&mut *conn).await.expect("read back").try_get::<String, _>("shown").expect("text")
    }

    /// What `value` is as `inline` writes it, and bound: the same.
    async fn same(conn: &mut AnyConnection, value: AnyValueKind) {
        let mut sql = String::new();
        inline("SELECT $1", std::slice::from_ref(&value), &mut sql).expect("inlined");
        // (bound, a parameter's type is what the statement says)
        let cast = match &value {
            AnyValueKind::Blob(_) => "$1::bytea",
            AnyValueKind::BigInt(_) => "$1::int8",
            AnyValueKind::Integer(_) => "$1::int4",
            AnyValueKind::SmallInt(_) => "$1::int2",
            AnyValueKind::Bool(_) => "$1::bool",
            AnyValueKind::Double(_) => "$1::float8",
            AnyValueKind::Real(_) => "$1::float4",
            _ => "$1::text",
        };
        let inlined = read(conn, sql.clone(), None).await;
        let bound = read(conn, format!("SELECT {cast}"), Some(value)).await;
        assert_eq!(inlined, bound, "{sql}");
    }

    fn kinds() -> impl Strategy<Value = AnyValueKind> {
        prop_oneof![
            any::<String>().prop_map(|s| AnyValueKind::Text(Arc::new(s.replace('\0', "")))),
            "[\\\\'\"$ \t\r\nE]{0,40}".prop_map(|s| AnyValueKind::Text(Arc::new(s))),
            any::<i64>().prop_map(AnyValueKind::BigInt),
            any::<i32>().prop_map(AnyValueKind::Integer),
            any::<i16>().prop_map(AnyValueKind::SmallInt),
            any::<bool>().prop_map(AnyValueKind::Bool),
            any::<f64>().prop_map(AnyValueKind::Double),
            any::<f32>().prop_map(AnyValueKind::Real),
            proptest::collection::vec(any::<u8>(), 0..64).prop_map(|b| AnyValueKind::Blob(Arc::new(b))),
            Just(AnyValueKind::Null(AnyTypeInfoKind::Text)),
        ]
    }

    #[test]
    fn every_value_inlined_reads_back_as_it_does_bound() {
        let Some(url) = database() else { return };
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        sqlx::any::install_default_drivers();
        let mut conn = rt.block_on(AnyConnection::connect(&url)).expect("the test database");
        // the edges first: a million characters, every plane, `$$`, quotes
        let edges =
            ["$$ x $$".to_string(), "'".repeat(3), "\\".repeat(5) + "'", "\u{1}\u{7f}\u{80}\u{ffff}\u{10000}\u{10ffff}".into(), "aé'\\".repeat(250_000)];
        for s in edges {
            rt.block_on(same(&mut conn, AnyValueKind::Text(Arc::new(s))));
        }
        for v in [AnyValueKind::BigInt(i64::MIN), AnyValueKind::Double(f64::NAN), AnyValueKind::Double(-0.0), AnyValueKind::Real(f32::INFINITY)] {
            rt.block_on(same(&mut conn, v));
        }
        let mut runner = TestRunner::new(Config { cases: 512, failure_persistence: None, ..Config::default() });
        let conn = std::cell::RefCell::new(conn);
        runner
            .run(&kinds(), |v| {
                rt.block_on(same(&mut conn.borrow_mut(), v));
                Ok(())
            })
            .unwrap();
        // a NUL is refused, as PostgreSQL refuses one bound
        assert!(inline("SELECT $1", &[AnyValueKind::Text(Arc::new("a\0b".into()))], &mut String::new()).is_err());
    }
}
