//! The organisation's inventory: who may see an eSIM's activation code
//! (`activation_codes`), its pool of numbers, which order lines
//! take numbers from (`numbers`), the leases that hold numbers for an
//! order (`lease`), the rest of a number let go (`quarantine`), and its
//! SIMs (`sims`).

pub mod activation_codes;
pub mod lease;
pub mod numbers;
pub mod quarantine;
pub mod sims;
