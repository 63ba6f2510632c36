//! Owns the guard that migrations/sqlite and migrations/postgres, kept by hand
//! in pairs, build the same schema: both are applied by `Store::connect`, read
//! back from the catalogs, normalised and compared, naming every difference.

use sqlx::{Connection, PgConnection, SqliteConnection};
use std::collections::{BTreeMap, BTreeSet};
use switchboard::store::Store;
use uuid::Uuid;

#[derive(Debug, Clone, PartialEq)]
struct Column {
    ty: String,
    not_null: bool,
    default: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct Table {
    /// in declared order (a `SELECT *` or `INSERT ... VALUES` sees this order)
    columns: Vec<(String, Column)>,
    primary_key: Vec<String>,
    /// name -> "unique (a, b)" / "(a, b) partial"; see `index_key` for names
    indexes: BTreeMap<String, String>,
    /// "(a) -> t(b) on delete .. on update .."
    foreign_keys: BTreeSet<String>,
    checks: usize,
}

type Schema = BTreeMap<String, Table>;

/// The type a column holds, modulo spelling. Integer width is kept: SQLite
/// stores every INT-affinity column in 64 bits and the store reads integers
/// as i64, so a PostgreSQL `integer` (32 bits: what `INTEGER` copied into
/// the postgres file gives) is drift; flags are 0/1 integers on both sides
/// (read_only, support, approval_required) and BOOLEAN stays distinct, since
/// it decodes differently through sqlx `Any`. `postgres` says the spelling
/// is PostgreSQL's `format_type` (canonical: bigint, integer, text, ...).
fn normalise_type(declared: &str, postgres: bool) -> String {
    let t = declared.to_ascii_lowercase();
    let base = t.split('(').next().unwrap_or("").trim();
    match base {
        // SQLite's affinity rule: a declared type containing INT is an integer
        b if !postgres && b.contains("int") => "int64",
        "bigint" | "int8" => "int64",
        "integer" | "int" | "int4" => "int32",
        "smallint" | "int2" => "int16",
        "text" | "varchar" | "character varying" | "char" | "character" | "clob" => "text",
        "real" | "double precision" | "double" | "float" | "float4" | "float8" => "real",
        "numeric" | "decimal" => "numeric",
        "blob" | "bytea" => "blob",
        "boolean" | "bool" => "boolean",
        other => other, // compared as spelled (e.g. timestamptz vs text is drift)
    }
    .to_string()
}

/// PostgreSQL spells `DEFAULT 'x'` as `'x'::text` and SQLite keeps
/// `DEFAULT (0)` as written: casts and outer parentheses are dropped. Both
/// backends' auto-numbering compares as `<autoincrement>` (see `read_sqlite`).
fn normalise_default(expr: Option<String>) -> Option<String> {
    let e = expr?;
    if e.starts_with("nextval(") {
        return Some("<autoincrement>".into());
    }
    Some(e.split("::").next().unwrap_or("").trim().trim_matches(|c| c == '(' || c == ')').to_string())
}

/// Index names: an explicit `CREATE [UNIQUE] INDEX` is compared by its name
/// (later migrations DROP INDEX by name, so the name must agree). The
/// indexes each backend makes for a UNIQUE constraint get names of its own
/// (sqlite_autoindex_t_2 vs t_a_b_key), so they are keyed `unique(a, b)` and
/// compare equal across backends. A constraint on one side and a CREATE
/// UNIQUE INDEX on the other are reported: they are dropped differently.
/// Primary-key indexes are left out: `primary_key` compares the key itself.
fn index_key(name: String, from_constraint: bool, columns: &[String]) -> String {
    if from_constraint { format!("unique({})", columns.join(", ")) } else { name }
}

fn index_text(unique: bool, partial: bool, columns: &[String]) -> String {
    format!("{}({}){}", if unique { "unique " } else { "" }, columns.join(", "), if partial { " partial" } else { "" })
}

fn fk_text(from: &[String], table: &str, to: &[String], on_delete: &str, on_update: &str) -> String {
    format!("({}) -> {table}({}) on delete {on_delete} on update {on_update}", from.join(", "), to.join(", "))
}

/// SQLite keeps no catalog of CHECK constraints, only the CREATE TABLE text,
/// and the two dialects spell check expressions differently (PostgreSQL
/// rewrites them), so only the number of CHECKs per table is compared.
fn count_checks(sql: &str) -> usize {
    let upper = sql.to_ascii_uppercase();
    upper
        .match_indices("CHECK")
        .filter(|(i, _)| {
            let before = upper[..*i].chars().last().is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'));
            before && upper[i + 5..].trim_start().starts_with('(')
        })
        .count()
}

async fn read_sqlite(url: &str) -> Schema {
    let mut conn = SqliteConnection::connect(url).await.expect("SQLite file opens");
    let tables: Vec<(String, String)> =
        sqlx::query_as("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_sqlx_migrations'")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    let mut schema = Schema::new();
    for (name, sql) in tables {
        let mut t = Table { checks: count_checks(&sql), ..Table::default() };
        let sql_cols = r#"SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?1) ORDER BY cid"#;
        let cols: Vec<(String, String, i64, Option<String>, i64)> = sqlx::query_as(sql_cols).bind(&name).fetch_all(&mut conn).await.unwrap();
        let mut pk: Vec<(i64, String)> = cols.iter().filter(|c| c.4 > 0).map(|c| (c.4, c.0.clone())).collect();
        pk.sort();
        t.primary_key = pk.into_iter().map(|(_, c)| c).collect();
        for (col, ty, not_null, default, _) in cols {
            // a sole INTEGER key is the rowid: never NULL, numbered by SQLite;
            // with AUTOINCREMENT numbers are never reused, as with a sequence
            let rowid = ty.eq_ignore_ascii_case("INTEGER") && t.primary_key == [col.clone()];
            let default = match rowid {
                true if sql.to_ascii_uppercase().contains("AUTOINCREMENT") => Some("<autoincrement>".into()),
                true => Some("<rowid, numbers reused>".into()),
                false => normalise_default(default),
            };
            t.columns.push((col, Column { ty: normalise_type(&ty, false), not_null: not_null != 0 || rowid, default }));
        }
        let sql_indexes = r#"SELECT name, "unique", origin, partial FROM pragma_index_list(?1)"#;
        let indexes: Vec<(String, i64, String, i64)> = sqlx::query_as(sql_indexes).bind(&name).fetch_all(&mut conn).await.unwrap();
        for (index, unique, origin, partial) in indexes.into_iter().filter(|i| i.2 != "pk") {
            let sql_columns = "SELECT name FROM pragma_index_info(?1) ORDER BY seqno";
            let columns: Vec<Option<String>> = sqlx::query_scalar(sql_columns).bind(&index).fetch_all(&mut conn).await.unwrap();
            let columns: Vec<String> = columns.into_iter().map(|c| c.unwrap_or_else(|| "<expr>".into())).collect();
            let text = index_text(unique != 0, partial != 0, &columns);
            t.indexes.insert(index_key(index, origin == "u", &columns), text);
        }
        let sql_fks = r#"SELECT id, "table", "from", "to", on_delete, on_update FROM pragma_foreign_key_list(?1) ORDER BY id, seq"#;
        let fks: Vec<(i64, String, String, Option<String>, String, String)> = sqlx::query_as(sql_fks).bind(&name).fetch_all(&mut conn).await.unwrap();
        let mut by_id: BTreeMap<i64, Vec<_>> = BTreeMap::new();
        for fk in fks {
            by_id.entry(fk.0).or_default().push(fk);
        }
        for parts in by_id.into_values() {
            let from: Vec<String> = parts.iter().map(|p| p.2.clone()).collect();
            // `REFERENCES parent` without columns means the parent's key
            let to: Vec<String> = match parts.iter().map(|p| p.3.clone()).collect::<Option<Vec<_>>>() {
                Some(to) => to,
                None => {
                    let sql_key = "SELECT name FROM pragma_table_info(?1) WHERE pk > 0 ORDER BY pk";
                    sqlx::query_scalar(sql_key).bind(&parts[0].1).fetch_all(&mut conn).await.unwrap()
                }
            };
            t.foreign_keys.insert(fk_text(&from, &parts[0].1, &to, &parts[0].4, &parts[0].5));
        }
        schema.insert(name, t);
    }
    schema
}

/// kind (p, f, c), columns, referenced table, its columns, on delete, on update
type PgConstraint = (String, Vec<String>, String, Vec<String>, String, String);

async fn read_postgres(url: &str) -> Schema {
    let mut conn = PgConnection::connect(url).await.expect("PostgreSQL test database opens");
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT relname::text FROM pg_class WHERE relnamespace = current_schema()::regnamespace \
         AND relkind IN ('r', 'p') AND relname <> '_sqlx_migrations'",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    // the names of a constraint's or index's columns, in key order
    macro_rules! names {
        ($rel:literal, $nums:literal) => {
            concat!(
                "array(SELECT coalesce(a.attname::text, '<expr>') FROM unnest(",
                $nums,
                "::int2[]) WITH ORDINALITY k(n, o) ",
                "LEFT JOIN pg_attribute a ON a.attrelid = ",
                $rel,
                " AND a.attnum = k.n ORDER BY k.o)"
            )
        };
    }
    let mut schema = Schema::new();
    for name in tables {
        let mut t = Table::default();
        let cols: Vec<(String, String, bool, Option<String>)> = sqlx::query_as(
            "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid) \
             FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
             WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
        )
        .bind(&name)
        .fetch_all(&mut conn)
        .await
        .unwrap();
        for (col, ty, not_null, default) in cols {
            t.columns.push((col, Column { ty: normalise_type(&ty, true), not_null, default: normalise_default(default) }));
        }
        let constraints: Vec<PgConstraint> = sqlx::query_as(concat!(
            "SELECT c.contype::text, ",
            names!("c.conrelid", "c.conkey"),
            ", coalesce(c.confrelid::regclass::text, ''), ",
            names!("c.confrelid", "c.confkey"),
            ", c.confdeltype::text, c.confupdtype::text ",
            "FROM pg_constraint c WHERE c.conrelid = $1::regclass AND c.contype IN ('p', 'f', 'c')"
        ))
        .bind(&name)
        .fetch_all(&mut conn)
        .await
        .unwrap();
        // pg_constraint's action codes, spelled as SQLite's pragma spells them
        let action = |code: &str| {
            match code {
                "r" => "RESTRICT",
                "c" => "CASCADE",
                "n" => "SET NULL",
                "d" => "SET DEFAULT",
                _ => "NO ACTION",
            }
            .to_string()
        };
        for (kind, from, parent, to, on_delete, on_update) in constraints {
            match kind.as_str() {
                "p" => t.primary_key = from,
                "f" => {
                    t.foreign_keys.insert(fk_text(&from, &parent, &to, &action(&on_delete), &action(&on_update)));
                }
                _ => t.checks += 1,
            }
        }
        let indexes: Vec<(String, bool, bool, bool, Vec<String>)> = sqlx::query_as(concat!(
            "SELECT i.indexrelid::regclass::text, i.indisunique, i.indpred IS NOT NULL, ",
            "EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.conrelid = i.indrelid AND c.contype = 'u'), ",
            names!("i.indrelid", "i.indkey"),
            " FROM pg_index i WHERE i.indrelid = $1::regclass AND NOT i.indisprimary"
        ))
        .bind(&name)
        .fetch_all(&mut conn)
        .await
        .unwrap();
        for (index, unique, partial, from_constraint, columns) in indexes {
            let text = index_text(unique, partial, &columns);
            t.indexes.insert(index_key(index, from_constraint, &columns), text);
        }
        schema.insert(name, t);
    }
    schema
}

/// Every difference between the two descriptions, one line each.
fn differences(sqlite: &Schema, postgres: &Schema) -> Vec<String> {
    let mut out = Vec::new();
    let only = |out: &mut Vec<String>, what: String, on_sqlite: bool| out.push(format!("{what}: only on {}", if on_sqlite { "sqlite" } else { "postgres" }));
    for (name, s) in sqlite {
        let Some(p) = postgres.get(name) else {
            only(&mut out, format!("table {name}"), true);
            continue;
        };
        let (s_cols, p_cols): (BTreeMap<_, _>, BTreeMap<_, _>) = (s.columns.iter().cloned().collect(), p.columns.iter().cloned().collect());
        for (col, sc) in &s_cols {
            let Some(pc) = p_cols.get(col) else {
                only(&mut out, format!("column {name}.{col}"), true);
                continue;
            };
            if sc.ty != pc.ty {
                out.push(format!("column {name}.{col}: type {} on sqlite, {} on postgres", sc.ty, pc.ty));
            }
            if sc.not_null != pc.not_null {
                let n = |b: bool| if b { "NOT NULL" } else { "nullable" };
                out.push(format!("column {name}.{col}: {} on sqlite, {} on postgres", n(sc.not_null), n(pc.not_null)));
            }
            if sc.default != pc.default {
                out.push(format!("column {name}.{col}: default {:?} on sqlite, {:?} on postgres", sc.default, pc.default));
            }
        }
        for col in p_cols.keys().filter(|c| !s_cols.contains_key(*c)) {
            only(&mut out, format!("column {name}.{col}"), false);
        }
        let shared = |c: &String| s_cols.contains_key(c) && p_cols.contains_key(c);
        let order = |t: &Table| t.columns.iter().map(|c| c.0.clone()).filter(shared).collect::<Vec<_>>();
        if order(s) != order(p) {
            out.push(format!("table {name}: column order {:?} on sqlite, {:?} on postgres", order(s), order(p)));
        }
        if s.primary_key != p.primary_key {
            out.push(format!("table {name}: primary key {:?} on sqlite, {:?} on postgres", s.primary_key, p.primary_key));
        }
        for (index, st) in &s.indexes {
            match p.indexes.get(index) {
                None => only(&mut out, format!("index {index} on {name} {st}"), true),
                Some(pt) if pt != st => out.push(format!("index {index} on {name}: {st} on sqlite, {pt} on postgres")),
                Some(_) => {}
            }
        }
        for (index, pt) in p.indexes.iter().filter(|i| !s.indexes.contains_key(i.0)) {
            only(&mut out, format!("index {index} on {name} {pt}"), false);
        }
        for fk in s.foreign_keys.difference(&p.foreign_keys) {
            only(&mut out, format!("foreign key {name}{fk}"), true);
        }
        for fk in p.foreign_keys.difference(&s.foreign_keys) {
            only(&mut out, format!("foreign key {name}{fk}"), false);
        }
        if s.checks != p.checks {
            out.push(format!("table {name}: {} CHECK constraints on sqlite, {} on postgres", s.checks, p.checks));
        }
    }
    for name in postgres.keys().filter(|n| !sqlite.contains_key(*n)) {
        only(&mut out, format!("table {name}"), false);
    }
    out
}

/// What one schema must satisfy on its own (all that runs without
/// PostgreSQL): it read back, and every foreign key references an existing
/// table's primary key or UNIQUE columns. PostgreSQL refuses anything else;
/// SQLite accepts it and then fails each write with "foreign key mismatch".
fn inconsistencies(schema: &Schema) -> Vec<String> {
    let mut out = Vec::new();
    if schema.len() < 2 || !schema.contains_key("organisations") {
        out.push(format!("schema did not read back: tables {:?}", schema.keys().collect::<Vec<_>>()));
    }
    let sorted = |v: Vec<String>| v.into_iter().collect::<BTreeSet<_>>();
    for (name, t) in schema {
        for fk in &t.foreign_keys {
            let parts: Vec<&str> = fk.split(['(', ')']).collect();
            let (parent, to) = (parts[2].trim_start_matches(" -> "), parts[3].split(", ").map(String::from).collect::<Vec<_>>());
            let Some(pt) = schema.get(parent) else {
                out.push(format!("foreign key {name}{fk}: table {parent} does not exist"));
                continue;
            };
            let mut keys = vec![sorted(pt.primary_key.clone())];
            keys.extend(
                pt.indexes
                    .values()
                    .filter(|i| i.starts_with("unique (") && !i.ends_with("partial"))
                    .map(|i| sorted(i.split(['(', ')']).nth(1).unwrap().split(", ").map(String::from).collect())),
            );
            if !keys.contains(&sorted(to)) {
                out.push(format!("foreign key {name}{fk}: not the primary key or a UNIQUE set of {parent}"));
            }
        }
    }
    out
}

/// Migrates a fresh SQLite file through the crate's own Store and reads it
/// back; also the key columns SQLite lets hold NULL (a non-INTEGER PRIMARY
/// KEY without NOT NULL does; PostgreSQL's never do).
async fn migrated_sqlite() -> (Schema, Vec<String>) {
    let file = std::env::temp_dir().join(format!("switchboard-migrations-{}.db", Uuid::new_v4().simple()));
    let url = format!("sqlite://{}", file.display());
    let store = Store::connect(&url).await.expect("SQLite migrates");
    let schema = read_sqlite(&url).await;
    store.pool().close().await;
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
    let mut nullable_keys = Vec::new();
    for (name, t) in schema.iter() {
        for (col, _) in t.columns.iter().filter(|(col, c)| !c.not_null && t.primary_key.contains(col)) {
            nullable_keys.push(format!("{name}.{col}"));
        }
    }
    (schema, nullable_keys)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_and_postgres_migrations_build_the_same_schema() {
    let (sqlite, nullable_keys) = migrated_sqlite().await;
    assert!(nullable_keys.is_empty(), "SQLite key columns that accept NULL (declare them NOT NULL): {nullable_keys:?}");
    let problems = inconsistencies(&sqlite);
    assert!(problems.is_empty(), "the SQLite schema:\n{}", problems.join("\n"));
    let Some(admin) = std::env::var("SWITCHBOARD_TEST_POSTGRES").ok().filter(|u| !u.is_empty()) else {
        // past the harness's capture: seen in the normal output
        use std::io::Write;
        let _ = std::io::stderr().write_all(b"\nPostgreSQL SKIPPED: SWITCHBOARD_TEST_POSTGRES is not set; the schemas were not compared\n");
        return;
    };
    let db = format!("sb_mig_{}", Uuid::new_v4().simple());
    let mut conn = PgConnection::connect(&admin).await.expect("PostgreSQL reachable");
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {db}"))).execute(&mut conn).await.unwrap();
    let base = admin.rsplit_once('/').map(|(b, _)| b.to_string()).unwrap();
    let url = format!("{base}/{db}");
    // read inside a task so that a failure still drops the database
    let read = tokio::spawn(async move {
        let store = Store::connect(&url).await.expect("PostgreSQL migrates");
        store.pool().close().await;
        read_postgres(&url).await
    })
    .await;
    sqlx::query(sqlx::AssertSqlSafe(format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))).execute(&mut conn).await.unwrap();
    let postgres = read.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    let problems = inconsistencies(&postgres);
    assert!(problems.is_empty(), "the PostgreSQL schema:\n{}", problems.join("\n"));
    let diffs = differences(&sqlite, &postgres);
    assert!(diffs.is_empty(), "migrations/sqlite and migrations/postgres differ:\n{}", diffs.join("\n"));
}

/// The comparison names what differs, so the test above cannot pass by
/// comparing nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_comparison_names_each_difference() {
    let (sqlite, _) = migrated_sqlite().await;
    assert!(differences(&sqlite, &sqlite).is_empty());
    let mut other = sqlite.clone();
    other.remove("tax_rates");
    let customers = other.get_mut("customers").unwrap();
    customers.columns.retain(|(c, _)| c != "contact_email");
    customers.columns.iter_mut().find(|(c, _)| c == "name").unwrap().1.ty = "int32".into();
    customers.columns.iter_mut().find(|(c, _)| c == "billing").unwrap().1.not_null = true;
    customers.indexes.remove("customers_org_seq");
    customers.foreign_keys.clear();
    let got = differences(&sqlite, &other);
    for want in [
        "table tax_rates: only on sqlite",
        "column customers.contact_email: only on sqlite",
        "column customers.name: type text on sqlite, int32 on postgres",
        "column customers.billing: nullable on sqlite, NOT NULL on postgres",
        "index customers_org_seq on customers (org_id, seq): only on sqlite",
        "foreign key customers(org_id) -> organisations(id) on delete NO ACTION on update NO ACTION: only on sqlite",
    ] {
        assert!(got.iter().any(|g| g == want), "missing {want:?} in:\n{}", got.join("\n"));
    }
    assert_eq!(got.len(), 6, "{}", got.join("\n"));
}
