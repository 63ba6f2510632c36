//! Version-change modules: one file per older revision, holding by hand
//! only what that revision adds to the next newer one's shapes (the field
//! copies are generated, see `copy` in each revision's module).

mod auk;
