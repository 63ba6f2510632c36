//! The sandbox payment providers on their own, under the API that will
//! call them: each test value's outcome, a charge made at most once per
//! attempt (asked again, also after a restart, it answers the first
//! outcome), a SEPA debit settling by the clock it is given, the
//! authentication step, and refunds that never exceed the charge.

use crate::harness::each_backend;
use chrono::{Duration, Utc};
use switchboard::payment_providers::{ChargeRequest, Entered, Method, Outcome, PaymentProvider, ProviderError, ProviderName, Providers, RefundOutcome};
use uuid::Uuid;

fn card(number: &str) -> Entered {
    Entered::Card { number: number.into(), expiry: "12/34".into(), cvc: "123".into() }
}

async fn saved(provider: &dyn PaymentProvider, entered: Entered) -> Method {
    provider.save_method(&entered, Utc::now()).await.unwrap().unwrap()
}

fn request(method: &Method, amount_minor: i64, off_session: bool) -> ChargeRequest<'_> {
    ChargeRequest { token: &method.token, amount_minor, currency: "SEK", off_session, now: Utc::now() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_test_card_has_its_outcome_on_and_off_session() {
    each_backend(|app| async move {
        let providers = Providers::sandbox(&app.store);
        let p1 = providers.get(ProviderName::Provider1);
        let declined = |code: &str| Outcome::Failed(code.into());
        let table = [
            ("4242 4242 4242 4242", Outcome::Succeeded, Outcome::Succeeded),
            ("4000 0000 0000 0002", declined("card_declined"), declined("card_declined")),
            ("4000 0000 0000 9995", declined("insufficient_funds"), declined("insufficient_funds")),
            ("4000 0025 0000 3155", Outcome::RequiresAction, Outcome::Succeeded),
            ("4000 0000 0000 0341", Outcome::Succeeded, declined("card_declined")),
        ];
        for (number, on_session, off_session) in table {
            let method = saved(p1, card(number)).await;
            assert_eq!(method.display_name, format!("Visa •••• {}", &number[15..]));
            assert_eq!(p1.charge(Uuid::new_v4(), &request(&method, 1000, false)).await.unwrap(), on_session, "{number} on session");
            assert_eq!(p1.charge(Uuid::new_v4(), &request(&method, 1000, true)).await.unwrap(), off_session, "{number} off session");
        }
        // PROVIDER_1 takes no SEPA debit; PROVIDER_2 does
        let sepa = Entered::Sepa { iban: "DE89 3704 0044 0532 0130 00".into() };
        assert_eq!(p1.save_method(&sepa, Utc::now()).await.unwrap().unwrap_err().field, "iban");
        let p2 = providers.get(ProviderName::Provider2);
        assert_eq!(saved(p2, sepa).await.display_name, "SEPA Debit •••• 3000");
        // a method is charged only through the provider that keeps it
        let at_p2 = saved(p2, card("4242424242424242")).await;
        assert_eq!(p1.charge(Uuid::new_v4(), &request(&at_p2, 1000, false)).await.unwrap(), declined("payment_method_unknown"));
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attempt_is_charged_once_and_asked_about_after_a_restart() {
    each_backend(|mut app| async move {
        let attempt = Uuid::new_v4();
        let method = saved(Providers::sandbox(&app.store).get(ProviderName::Provider1), card("4242424242424242")).await;
        let first = Providers::sandbox(&app.store).get(ProviderName::Provider1).charge(attempt, &request(&method, 2500, false)).await.unwrap();
        assert_eq!(first, Outcome::Succeeded);
        app.restart().await;
        let providers = Providers::sandbox(&app.store);
        let p1 = providers.get(ProviderName::Provider1);
        assert_eq!(p1.charge_status(attempt, Utc::now()).await.unwrap(), Some(Outcome::Succeeded));
        assert_eq!(p1.charge(attempt, &request(&method, 2500, false)).await.unwrap(), Outcome::Succeeded, "the same attempt again");
        assert!(matches!(p1.charge(attempt, &request(&method, 2600, false)).await, Err(ProviderError::Refused(_))), "the same attempt for another amount");
        assert!(matches!(p1.charge(Uuid::new_v4(), &request(&method, 0, false)).await, Err(ProviderError::Refused(_))), "nothing to charge");
        assert_eq!(p1.charge_status(Uuid::new_v4(), Utc::now()).await.unwrap(), None, "never received");
        assert_eq!(providers.get(ProviderName::Provider2).charge_status(attempt, Utc::now()).await.unwrap(), None, "another provider's");
        // one charge in the ledger, refundable once up to its amount
        let refund = Uuid::new_v4();
        assert_eq!(p1.refund(refund, attempt, 2000, Utc::now()).await.unwrap(), RefundOutcome::Succeeded);
        assert_eq!(p1.refund(refund, attempt, 2000, Utc::now()).await.unwrap(), RefundOutcome::Succeeded, "the same refund again");
        assert_eq!(p1.refund(Uuid::new_v4(), attempt, 501, Utc::now()).await.unwrap(), RefundOutcome::Failed("refund_exceeds_charge".into()));
        assert!(matches!(p1.refund(Uuid::new_v4(), attempt, -1000, Utc::now()).await, Err(ProviderError::Refused(_))), "a negative refund");
        assert_eq!(p1.refund(Uuid::new_v4(), attempt, 500, Utc::now()).await.unwrap(), RefundOutcome::Succeeded);
        assert_eq!(
            p1.refund(Uuid::new_v4(), attempt, 1, Utc::now()).await.unwrap(),
            RefundOutcome::Failed("refund_exceeds_charge".into()),
            "all of it refunded"
        );
        let other = providers.get(ProviderName::Provider2);
        assert_eq!(
            other.refund(Uuid::new_v4(), attempt, 1, Utc::now()).await.unwrap(),
            RefundOutcome::Failed("charge_not_found".into()),
            "another provider's charge"
        );
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sepa_debit_settles_by_the_clock_and_authentication_decides_a_charge() {
    each_backend(|app| async move {
        let providers = Providers::sandbox(&app.store);
        let p2 = providers.get(ProviderName::Provider2);
        let now = Utc::now();
        for (iban, settled) in [("DE89370400440532013000", Outcome::Succeeded), ("DE62370400440532013001", Outcome::Failed("debit_failed".into()))] {
            let method = saved(p2, Entered::Sepa { iban: iban.into() }).await;
            let attempt = Uuid::new_v4();
            let charge = ChargeRequest { token: &method.token, amount_minor: 900, currency: "EUR", off_session: false, now };
            assert_eq!(p2.charge(attempt, &charge).await.unwrap(), Outcome::Processing);
            assert_eq!(p2.charge_status(attempt, now + Duration::minutes(4)).await.unwrap(), Some(Outcome::Processing));
            assert_eq!(p2.charge_status(attempt, now + Duration::minutes(5)).await.unwrap(), Some(settled.clone()));
            assert_eq!(p2.charge_status(attempt, now).await.unwrap(), Some(settled), "settled stays settled");
            // refunded once due, without anyone asking about it first
            let unasked = Uuid::new_v4();
            assert_eq!(p2.charge(unasked, &charge).await.unwrap(), Outcome::Processing);
            let refunded = p2.refund(Uuid::new_v4(), unasked, 900, now + Duration::minutes(6)).await.unwrap();
            assert_eq!(refunded == RefundOutcome::Succeeded, iban.ends_with("3000"), "{iban}: {refunded:?}");
        }
        let method = saved(p2, card("4000002500003155")).await;
        for (approved, then) in [(true, Outcome::Succeeded), (false, Outcome::Failed("authentication_failed".into()))] {
            let attempt = Uuid::new_v4();
            assert_eq!(p2.charge(attempt, &request(&method, 700, false)).await.unwrap(), Outcome::RequiresAction);
            assert_eq!(p2.authenticate(attempt, approved, now).await.unwrap(), then);
            assert_eq!(p2.authenticate(attempt, !approved, now).await.unwrap(), then, "the first answer stands");
            assert_eq!(p2.charge(attempt, &request(&method, 700, false)).await.unwrap(), then, "charged again: where the first charge stands");
            let p1 = providers.get(ProviderName::Provider1);
            assert!(matches!(p1.authenticate(attempt, true, now).await, Err(ProviderError::Refused(_))), "another provider's charge");
            assert_eq!(p2.refund(Uuid::new_v4(), attempt, 700, now).await.unwrap() == RefundOutcome::Succeeded, approved);
        }
        // a saved card charged after its expiry is declined
        let expiring = saved(
            p2,
            Entered::Card { number: "4242424242424242".into(), expiry: format!("{}", (now + Duration::days(40)).format("%m/%y")), cvc: "123".into() },
        )
        .await;
        let later = ChargeRequest { now: now + Duration::days(80), ..request(&expiring, 100, true) };
        assert_eq!(p2.charge(Uuid::new_v4(), &later).await.unwrap(), Outcome::Failed("expired_card".into()));
        assert!(!p2.method_usable(&expiring.token, later.now.date_naive()).await.unwrap());
        assert!(p2.method_usable(&expiring.token, now.date_naive()).await.unwrap());
        app
    })
    .await;
}
