//! `serve --demo`: on an empty database, an organisation with a key and a
//! few customers and users, and the demo catalog (demo/catalog.yaml),
//! so a newcomer can call the API at once.

use crate::wire::latest as wire;
use crate::clock::Clock;
use crate::domain::{Caller, customers, users};
use crate::store::Store;
use anyhow::Result;

/// The demo key's secret, or None when the database already has data.
pub async fn seed(store: &Store, clock: &Clock) -> Result<Option<String>> {
    if store.has_organisations().await? {
        return Ok(None);
    }
    let org = store.create_organisation("Demo Telecom", clock.now()).await?;
    let key = crate::admin::key_create(store, clock, org, None, false).await?;
    let caller = Caller { store: store.clone(), org, api_key_id: uuid::Uuid::nil(), user: None, now: clock.now() };
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
                preferred_locale: customers::DEFAULT_LOCALE.into(),
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
    Ok(key["apiKey"].as_str().map(str::to_string))
}

/// Two submitted orders of Acme: a mobile subscription
/// (`rid_acme-mobile-1`), then a PBX user license assigned to it and an
/// extra-data add-on for it.
async fn orders(caller: &Caller) -> crate::error::Result<()> {
    use crate::domain::catalog::entity_id;
    let offering = |key: &str| entity_id(caller.org, "offering", key).to_string();
    order(caller, serde_json::json!([
        {"type": "SUBSCRIPTION", "productOfferingId": offering("mobile-10gb"), "bindingContract": true,
         "subscription": {"simType": "ESIM", "msisdn": "+46701234567", "referenceId": "acme-mobile-1"}},
    ]))
    .await?;
    order(caller, serde_json::json!([
        {"type": "LICENSE", "productOfferingId": offering("pbx-user"), "subscriptionId": "rid_acme-mobile-1"},
        {"type": "SUBSCRIPTION_ADDON", "productOfferingId": offering("extra-data-5gb"), "subscriptionId": "rid_acme-mobile-1"},
    ]))
    .await
}

async fn order(caller: &Caller, lines: serde_json::Value) -> crate::error::Result<()> {
    let request: wire::CreateOrderRequest = serde_json::from_value(serde_json::json!({"customerId": "rid_acme", "lineItems": lines}))
        .map_err(|e| crate::error::Error::Internal(e.to_string()))?;
    let order = crate::domain::orders::create(caller, request, chrono::Duration::days(7)).await?;
    crate::domain::orders::submit(caller, &order.order_id.to_string()).await?;
    Ok(())
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
