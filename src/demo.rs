//! `serve --demo`: on an empty database, an organisation with a key and a
//! few customers and users, the demo catalog (demo/catalog.yaml), and
//! orders whose subscriptions stand in several states of their lifecycle,
//! and payments (links, intents, a saved profile, sessions and a setup
//! page) and invoices, so a newcomer can call the API at once.

use crate::clock::Clock;
use crate::domain::{Caller, customers, users};
use crate::store::Store;
use crate::wire::latest as wire;
use anyhow::Result;
use chrono::Datelike;

/// The demo key's secret, or None when the database already has data.
/// `public_url`: where the hosted payment pages are (`serve --public-url`).
pub async fn seed(store: &Store, clock: &Clock, public_url: &str) -> Result<Option<String>> {
    if store.has_organisations().await? {
        return Ok(None);
    }
    let org = store.create_organisation("Demo Telecom", true, clock.now()).await?;
    let key = crate::admin::key_create(store, clock, org, None, false).await?;
    let caller = Caller::system(store, org, clock.now());
    let people = [
        ("Acme AB", wire::CustomerType::Business, "acme", "Anna Svensson", "anna", "anna@acme.example", "SEK"),
        ("Globex Inc", wire::CustomerType::Business, "globex", "Hank Scorpio", "hank", "hank@globex.example", "USD"),
        ("Maria Lind", wire::CustomerType::Consumer, "maria", "Maria Lind", "maria", "maria@example.com", "SEK"),
    ];
    for (name, customer_type, reference, user, user_reference, email, currency) in people {
        let customer = customers::create(
            &caller,
            wire::CreateCustomerRequest {
                customer_type,
                name: name.into(),
                identity: None,
                preferred_locale: crate::domain::customers::DEFAULT_LOCALE.into(),
                reference_id: Some(reference.into()),
                contact: wire::CustomerContact { email: Some(email.into()), msisdn: None },
                billing: Some(wire::CustomerBilling {
                    method: wire::BillingMethod::EmailInvoice,
                    email: Some(email.into()),
                    address: None,
                    currency: currency.into(),
                    default_payment_profile_id: None,
                    auto_pay: false,
                }),
                shipping: None,
                metadata: None,
            },
        )
        .await
        .map_err(|e| anyhow::anyhow!("demo customer: {e}"))?;
        users::create(
            &caller,
            wire::CreateUserRequest {
                name: user.into(),
                email: email.into(),
                msisdn: None,
                role: wire::CustomerRole::Admin,
                customer_id: customer.customer_id.to_string(),
                reference_id: Some(user_reference.into()),
                identity: None,
                metadata: None,
            },
        )
        .await
        .map_err(|e| anyhow::anyhow!("demo user: {e}"))?;
    }
    load_catalog(store, org).await?;
    orders(&caller).await.map_err(|e| anyhow::anyhow!("demo order: {e}"))?;
    lives(&caller).await.map_err(|e| anyhow::anyhow!("demo subscriptions: {e}"))?;
    // from here on orders take their numbers from the pool: those paid or
    // charged once the server runs too
    pool(&caller).await?;
    payments(&caller, public_url).await.map_err(|e| anyhow::anyhow!("demo payments: {e}"))?;
    billing(&caller, public_url).await.map_err(|e| anyhow::anyhow!("demo invoices: {e}"))?;
    inventory(&caller).await?;
    // a report of every subscription, which the server's worker writes as
    // soon as it runs (docs/reports.md)
    let report = wire::NewReportRun { report_key: wire::ReportKey(crate::kinds::ReportKey::Subscriptions.stored().into()), format: None, parameters: None };
    crate::domain::reports::create(&caller, report).await.map_err(|e| anyhow::anyhow!("demo report: {e}"))?;
    Ok(key["apiKey"].as_str().map(str::to_string))
}

/// The demo's number pool, imported after the first subscriptions (whose
/// numbers are outside it).
async fn pool(caller: &Caller) -> Result<()> {
    for (range, kind) in [(POOL, crate::kinds::NumberType::Cell), (DATA_POOL, crate::kinds::NumberType::Data)] {
        let numbers = crate::admin::numbers::parse_range(range, kind)?;
        caller.store.import_numbers(caller.org, &numbers, caller.now).await?;
    }
    Ok(())
}

/// The demo's SIM inventory (after the subscriptions above, whose SIMs
/// are outside it), a line of Maria's given a number of the pool and
/// activated on the first eSIM, and a line of Acme's bringing its number
/// (`rid_acme-port-1`).
async fn inventory(caller: &Caller) -> Result<()> {
    use crate::domain::catalog::entity_id;
    let sims = crate::admin::sims::parse_csv(SIMS)?;
    caller.store.import_sims(caller.org, &sims, caller.now).await?;
    let line = serde_json::json!({"type": "SUBSCRIPTION", "productOfferingId": entity_id(caller.org, "offering", "mobile-10gb"),
        "subscription": {"simType": "ESIM", "referenceId": "maria-pool-1"}});
    let failed = |e: crate::error::Error| anyhow::anyhow!("demo inventory: {e}");
    order(caller, "rid_maria", serde_json::json!([line])).await.map_err(failed)?;
    // Acme brings a number from another operator (docs/porting.md): on a
    // temporary number of the pool until the port completes
    let port = serde_json::json!({"type": "SUBSCRIPTION", "productOfferingId": entity_id(caller.org, "offering", "mobile-10gb"),
        "subscription": {"simType": "ESIM", "msisdn": "+46709871234", "referenceId": "acme-port-1", "portIn": {"details": {"identity": "556036-0793"}}}});
    order(caller, "rid_acme", serde_json::json!([port])).await.map_err(failed)?;
    let network = crate::network::Sandbox::default();
    let moves = crate::domain::subscriptions::lifecycle::Moves { caller, network: &network };
    moves.activate("rid_maria-pool-1", parse(serde_json::json!({})).map_err(failed)?).await.map_err(failed)?;
    Ok(())
}

/// The demo organisation's number pool (docs/inventory.md): mobile numbers,
pub const POOL: &str = "+46701000000..+46701000999";
/// and data-only ones.
pub const DATA_POOL: &str = "+46731000000..+46731000099";

/// The demo organisation's SIM inventory: four eSIMs and two cards.
pub const SIMS: &str = "iccid,type
89469900000000000010,ESIM
89469900000000000028,ESIM
89469900000000000036,ESIM
89469900000000000044,ESIM
89469800000000000011,PSIM
89469800000000000029,PSIM
";

/// The demo's orders, all submitted: Acme's two mobile subscriptions
/// (`rid_acme-mobile-1` with a binding contract, `rid_acme-mobile-2`),
/// then a PBX user license assigned to the first and an extra-data add-on
/// for it; Globex's quarterly unlimited plan (`rid_globex-mobile-1`) and
/// data SIM (`rid_globex-data-1`); Maria's mobile plan
/// (`rid_maria-mobile-1`).
async fn orders(caller: &Caller) -> crate::error::Result<()> {
    use crate::domain::catalog::entity_id;
    let offering = |key: &str| entity_id(caller.org, "offering", key).to_string();
    let line = |key: &str, binding: bool, msisdn: &str, reference: &str| {
        serde_json::json!({"type": "SUBSCRIPTION", "productOfferingId": offering(key), "bindingContract": binding,
            "subscription": {"simType": "ESIM", "msisdn": msisdn, "referenceId": reference}})
    };
    order(
        caller,
        "rid_acme",
        serde_json::json!([line("mobile-10gb", true, "+46701234567", "acme-mobile-1"), line("mobile-10gb", false, "+46701234568", "acme-mobile-2"),]),
    )
    .await?;
    order(
        caller,
        "rid_acme",
        serde_json::json!([
            {"type": "LICENSE", "productOfferingId": offering("pbx-user"), "subscriptionId": "rid_acme-mobile-1"},
            {"type": "SUBSCRIPTION_ADDON", "productOfferingId": offering("extra-data-5gb"), "subscriptionId": "rid_acme-mobile-1"},
        ]),
    )
    .await?;
    order(
        caller,
        "rid_globex",
        serde_json::json!([line("mobile-unlimited", false, "+46701234569", "globex-mobile-1"), line("data-sim-20gb", false, "+46701234570", "globex-data-1"),]),
    )
    .await?;
    order(caller, "rid_maria", serde_json::json!([line("mobile-10gb", false, "+46701234571", "maria-mobile-1")])).await
}

async fn order(caller: &Caller, customer: &str, lines: serde_json::Value) -> crate::error::Result<()> {
    let request: wire::CreateOrderRequest = parse(serde_json::json!({"customerId": customer, "lineItems": lines}))?;
    let order = crate::domain::orders::create(caller, request, chrono::Duration::days(7)).await?;
    crate::domain::orders::submit(caller, &order.order_id.to_string()).await?;
    Ok(())
}

fn parse<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> crate::error::Result<T> {
    serde_json::from_value(value).map_err(|e| crate::error::Error::Internal(format!("demo request: {e}")))
}

/// The subscriptions' lives, so a newcomer sees the lifecycle at once:
/// `rid_acme-mobile-1` active with 86% of its data used (so the 80% quota
/// notice is recorded), `rid_acme-mobile-2` paused, `rid_globex-mobile-1`
/// active with a change to the cheaper Mobile 10 GB scheduled for its
/// renewal day, `rid_maria-mobile-1` active and cancelled for the 1st of
/// next month, and `rid_globex-data-1` still PENDING, to activate.
async fn lives(caller: &Caller) -> crate::error::Result<()> {
    use crate::domain::catalog::entity_id;
    use crate::domain::subscriptions::{self, lifecycle::Moves};
    let network = crate::network::Sandbox::default();
    let moves = Moves { caller, network: &network };
    for reference in ["acme-mobile-1", "acme-mobile-2", "globex-mobile-1", "maria-mobile-1"] {
        moves.activate(&format!("rid_{reference}"), parse(serde_json::json!({}))?).await?;
    }
    let reason = |why: &str| parse(serde_json::json!({"reason": why}));
    moves.pause("rid_acme-mobile-2", reason("Parental leave until spring")?).await?;
    let change = serde_json::json!({"productOfferingId": entity_id(caller.org, "offering", "mobile-10gb").to_string()});
    subscriptions::offerings::change(caller, "rid_globex-mobile-1", parse(change)?).await?;
    let today = caller.now.date_naive();
    let first_of_next_month = today.with_day(1).and_then(|d| d.checked_add_months(chrono::Months::new(1))).unwrap_or(today);
    let cancel = serde_json::json!({"effectiveDate": first_of_next_month, "reason": "Moving abroad"});
    moves.cancel("rid_maria-mobile-1", parse(cancel)?).await?;
    usage(caller).await
}

/// Usage of `rid_acme-mobile-1` today: 8,800 of its 10,240 MB in four
/// sessions (the fourth crosses 80%), two calls and some texts.
async fn usage(caller: &Caller) -> crate::error::Result<()> {
    use crate::domain::usage::record::record;
    use crate::store::{IdOrRef, UsageKind, UsageRecord};
    let s = caller.store.subscription(caller.org, &IdOrRef::parse("rid_acme-mobile-1")).await?;
    let s = s.ok_or_else(|| crate::error::Error::Internal("demo subscription vanished".into()))?;
    let records = [(UsageKind::Data, 2200 * 1024); 4].into_iter().chain([(UsageKind::Voice, 1860), (UsageKind::Voice, 3540), (UsageKind::Sms, 42)]);
    for (n, (kind, quantity)) in records.enumerate() {
        let r = UsageRecord { record_id: format!("demo-{n}"), kind, quantity, charge_minor: 0, country: None, occurred_at: caller.now };
        record(&caller.store, caller.org, s.id, &r, caller.now).await?;
    }
    Ok(())
}

/// The demo's payments, through the sandbox providers: Maria paid the link
/// of her second order by card (4242), saving it as her default profile
/// (a COMPLETED link, a SUCCEEDED intent with a partial refund, an ACTIVE
/// profile), then a third order from that profile through a payment
/// session; Acme's link for a new order waits for payment after a declined
/// card (its intent REQUIRES_PAYMENT_METHOD), and a payment profile
/// session for the same order offers its setup page.
async fn payments(caller: &Caller, public_url: &str) -> crate::error::Result<()> {
    use crate::domain::catalog::entity_id;
    use crate::domain::payments::{charge, links, profile_sessions, refunds, sessions};
    use crate::payment_providers::{Entered, Providers};
    let providers = Providers::sandbox(&caller.store);
    let card = |number: &str| Entered::Card { number: number.into(), expiry: "12/30".into(), cvc: "123".into() };
    // (the lines leave their numbers out: the pool gives them)
    for (customer, number, save) in [("rid_maria", "4242424242424242", true), ("rid_acme", "4000000000000002", false)] {
        let line = serde_json::json!([{"type": "SUBSCRIPTION", "productOfferingId": entity_id(caller.org, "offering", "mobile-10gb").to_string(),
            "subscription": {"simType": "ESIM"}}]);
        let request: wire::CreateOrderRequest = parse(serde_json::json!({"customerId": customer, "lineItems": line}))?;
        let order = crate::domain::orders::create(caller, request, chrono::Duration::days(7)).await?;
        let request = parse(serde_json::json!({"orderId": order.order_id, "savePaymentProfile": save, "setAsDefaultPaymentProfile": save,
            "description": "First month", "returnUrl": "https://shop.example/thanks"}))?;
        let link = links::create(caller, public_url, request, crate::domain::invoices::collect::link_collecting).await?;
        let link = caller.store.link(caller.org, link.payment_link_id).await?.ok_or_else(|| crate::error::Error::Internal("demo link vanished".into()))?;
        charge::pay(caller, &providers, &link, charge::Paying::Entered(&card(number))).await?;
        if save {
            refunds::create(caller, &link.intent_id.to_string(), parse(serde_json::json!({"amountMinor": 1000, "reason": "Goodwill"}))?).await?;
        } else {
            // Acme may save a SEPA mandate instead, on a setup page
            let setup = serde_json::json!({"orderId": order.order_id, "paymentProvider": "PROVIDER_2", "returnUrl": "https://shop.example/card-saved"});
            profile_sessions::create(caller, public_url, parse(setup)?).await?;
        }
    }
    let line = serde_json::json!([{"type": "SUBSCRIPTION", "productOfferingId": entity_id(caller.org, "offering", "data-sim-20gb").to_string(),
        "subscription": {"simType": "ESIM"}}]);
    let order =
        crate::domain::orders::create(caller, parse(serde_json::json!({"customerId": "rid_maria", "lineItems": line}))?, chrono::Duration::days(7)).await?;
    let maria = crate::domain::customers::find(caller, "rid_maria").await?;
    let profile = maria.billing.and_then(|b| b.default_payment_profile_id).unwrap_or_default();
    // (its charge is sent by its job, which runs once the server does)
    sessions::create(caller, parse(serde_json::json!({"orderId": order.order_id, "paymentProfileId": profile}))?).await?;
    Ok(())
}

/// The demo's invoices: Initech AB, billed by e-invoice, bought Mobile
/// 10 GB 40 days ago; its initial invoice (INV-000001) is PAID by bank
/// transfer, its first renewal's (INV-000002) OPEN with its document; the
/// other customers' orders of today are on DRAFTs finalised tonight.
async fn billing(caller: &Caller, public_url: &str) -> crate::error::Result<()> {
    use crate::domain::catalog::entity_id;
    use crate::domain::invoices;
    use crate::domain::subscriptions::{lifecycle::Moves, scheduled};
    let past = Caller { now: caller.now - chrono::Duration::days(40), ..caller.clone() };
    let customer = parse(serde_json::json!({
        "customerType": "BUSINESS", "name": "Initech AB", "referenceId": "initech", "contact": {"email": "ap@initech.example"},
        "billing": {"method": "E_INVOICE", "currency": "SEK", "email": "ap@initech.example",
                    "address": {"street1": "Drottninggatan 5", "city": "Uppsala", "zip": "753 10", "country": "SE"}}
    }))?;
    customers::create(&past, customer).await?;
    let line = serde_json::json!([{"type": "SUBSCRIPTION", "productOfferingId": entity_id(caller.org, "offering", "mobile-10gb").to_string(),
        "subscription": {"simType": "ESIM", "referenceId": "initech-mobile-1"}}]);
    order(&past, "rid_initech", line).await?;
    let network = crate::network::Sandbox::default();
    Moves { caller: &past, network: &network }.activate("rid_initech-mobile-1", parse(serde_json::json!({}))?).await?;
    // what fell due since, done now as the jobs would: the renewal, the
    // invoices finalised and delivered
    again_if_changed(|| scheduled::apply_all_due(caller)).await?;
    let initech = customers::find(caller, "rid_initech").await?;
    let filter = crate::store::InvoiceFilter { customers: Some(vec![initech.id]), ..Default::default() };
    let billed = caller.store.invoices(caller.org, &filter, None, 10).await?.items;
    for invoice in &billed {
        again_if_changed(|| invoices::due::run(&caller.store, &network, public_url, caller.org, invoice.id, caller.now)).await?;
    }
    if let Some(first) = billed.first() {
        let paid = || async {
            invoices::paid::mark_paid(caller, &first.id.to_string(), parse(serde_json::json!({"method": "BANK_TRANSFER", "reference": "OCR 4711"}))?).await
        };
        again_if_changed(paid).await?;
    }
    Ok(())
}

/// `work`, done again when another writer changed what it read meanwhile:
/// the demo is seeded while the server's jobs run, and they may be at the
/// same subscription or invoice (seen on PostgreSQL with several
/// instances starting). Reading again decides, as the error says.
async fn again_if_changed<T, F, Fut>(mut work: F) -> crate::error::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = crate::error::Result<T>>,
{
    let mut tries = 0;
    loop {
        match work().await {
            Err(e) if e.is_concurrent_conflict() && tries < 5 => tries += 1,
            done => return done,
        }
    }
}

/// The demo catalog, in the format of `admin catalog import`.
pub const CATALOG: &str = include_str!("../demo/catalog.yaml");

/// Loads the demo catalog into `org` (whose customers `rid_acme` and
/// `rid_globex` it assigns the business catalog).
pub async fn load_catalog(store: &Store, org: uuid::Uuid) -> Result<()> {
    use crate::domain::catalog::{file, import};
    let parsed = file::parse(CATALOG, false).map_err(|p| anyhow::anyhow!("demo catalog: {p}"))?;
    match import::import(store, org, parsed).await {
        Ok(_) => Ok(()),
        Err(import::ImportError::Invalid(p)) => anyhow::bail!("demo catalog: {}", p.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("; ")),
        Err(import::ImportError::Store(e)) => Err(e.into()),
    }
}
