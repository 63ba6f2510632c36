//! `serve --demo`: on an empty database, an organisation with a key and a
//! few customers and users, so a newcomer can call the API at once.

use crate::api::generated::bullfinch::types as wire;
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
                preferred_locale: None,
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
                role: Some(wire::CustomerRole::Admin),
                customer_id: customer.customer_id.to_string(),
                reference_id: Some(user_reference.into()),
                identity: None,
                metadata: None,
            },
        )
        .await
        .map_err(|e| anyhow::anyhow!("demo user: {e}"))?;
    }
    Ok(key["apiKey"].as_str().map(str::to_string))
}
