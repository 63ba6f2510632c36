//! The organisation's inventory: its pool of numbers, which order lines
//! take numbers from (`numbers`), the leases that hold numbers for an
//! order (`lease`), and its SIMs (`sims`).

pub mod lease;
pub mod numbers;
pub mod sims;
