//! The domain's own enumerations (the roles, the kinds of SIMs, customers
//! and products) and `kind!`, which declares them and the resources'
//! states (those live beside their transition tables, in `crate::states`).
//! Each names, once, the
//! spelling the database keeps (a column, a filter, a stored document)
//! and the value of the newest document it is shown as. Renaming a value
//! in a document changes only the wire side here; what the database reads
//! stays put, and a value one side lacks does not compile.

/// Declares a kind: its variants, each with its stored spelling, and the
/// wire enum of the newest document it converts to and from (variant by
/// variant, exhaustively both ways); or, `as spelled`, a kind the
/// documents leave an open string, written on the wire as it is stored.
macro_rules! kind {
    ($(#[$doc:meta])* $name:ident <=> $wire:ident { $($variant:ident = $stored:literal <=> $wired:ident,)+ }) => {
        kind!(@spelled $(#[$doc])* $name { $($variant = $stored,)+ });

        /// As the API names it (in messages and the published tables).
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                $crate::wire::latest::$wire::from(*self).fmt(f)
            }
        }

        impl From<$name> for $crate::wire::latest::$wire {
            fn from(v: $name) -> Self {
                match v {
                    $($name::$variant => $crate::wire::latest::$wire::$wired,)+
                }
            }
        }

        impl From<$crate::wire::latest::$wire> for $name {
            fn from(v: $crate::wire::latest::$wire) -> Self {
                match v {
                    $($crate::wire::latest::$wire::$wired => $name::$variant,)+
                }
            }
        }
    };
    // An open set on the wire (a string the documents let grow): the
    // stored spelling is the API's too.
    ($(#[$doc:meta])* $name:ident as spelled { $($variant:ident = $stored:literal,)+ }) => {
        kind!(@spelled $(#[$doc])* $name { $($variant = $stored,)+ });

        /// As the API names it: its stored spelling.
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.stored())
            }
        }
    };
    (@spelled $(#[$doc:meta])* $name:ident { $($variant:ident = $stored:literal,)+ }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($variant,)+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// Its spelling in the database.
            pub fn stored(self) -> &'static str {
                match self {
                    $($name::$variant => $stored,)+
                }
            }

            /// The value a stored spelling names.
            pub fn from_stored(s: &str) -> Option<Self> {
                match s {
                    $($stored => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;

            /// Reads a stored spelling (the store's columns).
            fn from_str(s: &str) -> Result<Self, String> {
                Self::from_stored(s).ok_or_else(|| format!("{s:?} is no stored {}", stringify!($name)))
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.stored())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                Self::from_stored(&s).ok_or_else(|| serde::de::Error::custom(format!("{s:?} is no stored {}", stringify!($name))))
            }
        }
    };
}

/// For the state kinds, declared beside their tables in `crate::states`.
pub(crate) use kind;

kind! {
    /// A physical SIM card or an eSIM profile.
    SimType <=> SimCardType {
        Psim = "PSIM" <=> Psim,
        Esim = "ESIM" <=> Esim,
    }
}

kind! {
    /// What a number of the pool is for (`numbers.number_type`).
    NumberType <=> NumberType {
        Cell = "CELL" <=> Cell,
        Data = "DATA" <=> Data,
        Mbb = "MBB" <=> Mbb,
        M2m = "M2M" <=> M2m,
    }
}

kind! {
    /// Which report a run is of (`report_runs.report_key`): an open set in
    /// the documents (`ReportKey` is a string), so a key added later is
    /// read by every client.
    ReportKey as spelled {
        Subscriptions = "subscriptions",
        Usage = "usage",
        Orders = "orders",
        PaymentIntents = "payment_intents",
        Invoices = "invoices",
        Events = "events",
    }
}

kind! {
    /// A report file's format (`report_runs.format`).
    ReportFormat <=> ReportFormat {
        Csv = "CSV" <=> Csv,
        Jsonl = "JSONL" <=> Jsonl,
    }
}

kind! {
    /// Which way a number moves (`portings.direction`).
    PortingDirection <=> PortingDirection {
        Inbound = "INBOUND" <=> Inbound,
        Outbound = "OUTBOUND" <=> Outbound,
    }
}

kind! {
    /// A user's role at a customer (`user_roles.role`).
    CustomerRole <=> CustomerRole {
        Member = "MEMBER" <=> Member,
        Manager = "MANAGER" <=> Manager,
        Admin = "ADMIN" <=> Admin,
    }
}

kind! {
    /// A private person or a company (`customers.customer_type`).
    CustomerType <=> CustomerType {
        Consumer = "CONSUMER" <=> Consumer,
        Business = "BUSINESS" <=> Business,
    }
}

kind! {
    /// How a customer's invoices reach them (in its stored billing).
    BillingMethod <=> BillingMethod {
        EInvoice = "E_INVOICE" <=> EInvoice,
        EmailInvoice = "EMAIL_INVOICE" <=> EmailInvoice,
        PaperInvoice = "PAPER_INVOICE" <=> PaperInvoice,
    }
}

kind! {
    /// What a product is (the product document's `type`).
    ProductType <=> ProductType {
        Subscription = "SUBSCRIPTION" <=> Subscription,
        SubscriptionAddon = "SUBSCRIPTION_ADDON" <=> SubscriptionAddon,
        License = "LICENSE" <=> License,
        ExternalProduct = "EXTERNAL_PRODUCT" <=> ExternalProduct,
        SimCard = "SIM_CARD" <=> SimCard,
    }
}

kind! {
    /// What a product or a group is sold as (the documents' `category`).
    ProductCategory <=> ProductCategory {
        SubscriptionCell = "PRODUCT_CATEGORY_SUBSCRIPTION_CELL" <=> ProductCategorySubscriptionCell,
        SubscriptionDataSim = "PRODUCT_CATEGORY_SUBSCRIPTION_DATA_SIM" <=> ProductCategorySubscriptionDataSim,
        SubscriptionBroadband = "PRODUCT_CATEGORY_SUBSCRIPTION_BROADBAND" <=> ProductCategorySubscriptionBroadband,
        SubscriptionM2m = "PRODUCT_CATEGORY_SUBSCRIPTION_M2M" <=> ProductCategorySubscriptionM2m,
        TravelEsim = "PRODUCT_CATEGORY_TRAVEL_ESIM" <=> ProductCategoryTravelEsim,
        ExtraData = "PRODUCT_CATEGORY_EXTRA_DATA" <=> ProductCategoryExtraData,
        TravelEsimPackage = "PRODUCT_CATEGORY_TRAVEL_ESIM_PACKAGE" <=> ProductCategoryTravelEsimPackage,
        Abroad = "PRODUCT_CATEGORY_ABROAD" <=> ProductCategoryAbroad,
        ExternalProduct = "PRODUCT_CATEGORY_EXTERNAL_PRODUCT" <=> ProductCategoryExternalProduct,
        ExternalProductAddon = "PRODUCT_CATEGORY_EXTERNAL_PRODUCT_ADDON" <=> ProductCategoryExternalProductAddon,
        SimCard = "PRODUCT_CATEGORY_SIM_CARD" <=> ProductCategorySimCard,
    }
}

kind! {
    /// Whether an offering is sold (the offering document's `status`).
    OfferingStatus <=> ProductOfferingStatus {
        Available = "AVAILABLE" <=> Available,
        Archived = "ARCHIVED" <=> Archived,
    }
}

kind! {
    /// How an add-on becomes ACTIVE (a product's `features.activationType`).
    ActivationType <=> ActivationType {
        Instant = "INSTANT" <=> Instant,
        FirstUse = "FIRST_USE" <=> FirstUse,
    }
}

kind! {
    /// How an invoice was paid (`invoices.paid_method`).
    InvoicePaymentMethod <=> InvoicePaymentMethod {
        Autopay = "AUTOPAY" <=> Autopay,
        PaymentLink = "PAYMENT_LINK" <=> PaymentLink,
        BankTransfer = "BANK_TRANSFER" <=> BankTransfer,
        Cash = "CASH" <=> Cash,
        Other = "OTHER" <=> Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::states::payments::{
        ChargeStatus, PaymentIntentStatus, PaymentLinkStatus, PaymentProfileSessionStatus, PaymentProfileStatus, PaymentSessionStatus, RefundStatus,
    };
    use crate::states::{
        deliveries::DeliveryStatus, invoices::InvoiceStatus, licenses::LicenseStatus, orders::LineStatus, orders::OrderStatus, porting::PortingStatus,
        reports::ReportRunStatus, subscription_addons::AddonStatus, subscriptions::SubscriptionStatus,
    };

    /// Every stored spelling reads back as its own value, and no two
    /// values of a kind share one (the state kinds, declared with their
    /// tables in `crate::states`, too).
    #[test]
    fn each_value_reads_back_from_its_stored_spelling() {
        fn check<K: Copy + PartialEq + std::fmt::Debug>(all: &[K], stored: fn(K) -> &'static str, read: fn(&str) -> Option<K>) {
            for k in all {
                assert_eq!(read(stored(*k)), Some(*k), "{k:?}");
            }
            let mut spellings: Vec<_> = all.iter().map(|k| stored(*k)).collect();
            spellings.sort();
            spellings.dedup();
            assert_eq!(spellings.len(), all.len());
        }
        check(OrderStatus::ALL, OrderStatus::stored, OrderStatus::from_stored);
        check(LineStatus::ALL, LineStatus::stored, LineStatus::from_stored);
        check(SubscriptionStatus::ALL, SubscriptionStatus::stored, SubscriptionStatus::from_stored);
        check(AddonStatus::ALL, AddonStatus::stored, AddonStatus::from_stored);
        check(LicenseStatus::ALL, LicenseStatus::stored, LicenseStatus::from_stored);
        check(SimType::ALL, SimType::stored, SimType::from_stored);
        check(NumberType::ALL, NumberType::stored, NumberType::from_stored);
        check(PortingStatus::ALL, PortingStatus::stored, PortingStatus::from_stored);
        check(PortingDirection::ALL, PortingDirection::stored, PortingDirection::from_stored);
        check(ReportRunStatus::ALL, ReportRunStatus::stored, ReportRunStatus::from_stored);
        check(ReportKey::ALL, ReportKey::stored, ReportKey::from_stored);
        check(ReportFormat::ALL, ReportFormat::stored, ReportFormat::from_stored);
        check(DeliveryStatus::ALL, DeliveryStatus::stored, DeliveryStatus::from_stored);
        check(CustomerRole::ALL, CustomerRole::stored, CustomerRole::from_stored);
        check(CustomerType::ALL, CustomerType::stored, CustomerType::from_stored);
        check(BillingMethod::ALL, BillingMethod::stored, BillingMethod::from_stored);
        check(ProductType::ALL, ProductType::stored, ProductType::from_stored);
        check(ProductCategory::ALL, ProductCategory::stored, ProductCategory::from_stored);
        check(OfferingStatus::ALL, OfferingStatus::stored, OfferingStatus::from_stored);
        check(ActivationType::ALL, ActivationType::stored, ActivationType::from_stored);
        check(PaymentLinkStatus::ALL, PaymentLinkStatus::stored, PaymentLinkStatus::from_stored);
        check(PaymentIntentStatus::ALL, PaymentIntentStatus::stored, PaymentIntentStatus::from_stored);
        check(ChargeStatus::ALL, ChargeStatus::stored, ChargeStatus::from_stored);
        check(RefundStatus::ALL, RefundStatus::stored, RefundStatus::from_stored);
        check(PaymentProfileStatus::ALL, PaymentProfileStatus::stored, PaymentProfileStatus::from_stored);
        check(PaymentSessionStatus::ALL, PaymentSessionStatus::stored, PaymentSessionStatus::from_stored);
        check(PaymentProfileSessionStatus::ALL, PaymentProfileSessionStatus::stored, PaymentProfileSessionStatus::from_stored);
        check(InvoiceStatus::ALL, InvoiceStatus::stored, InvoiceStatus::from_stored);
        check(InvoicePaymentMethod::ALL, InvoicePaymentMethod::stored, InvoicePaymentMethod::from_stored);
    }
}
