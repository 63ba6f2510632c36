//! Add-ons: the extras attached to a subscription (extra data, abroad and
//! travel packages), which add-ons a subscription may be given, and their
//! lifecycle.

pub mod options;
