//! The catalog file `switchboard admin catalog import` reads (JSON or
//! YAML): its shape, and every rule it must keep before anything is stored.
//! Entities are named by `key`; their ids derive from the organisation and
//! the key, so importing a file again finds the same rows.

use super::price::Price;
use crate::kinds::{OfferingStatus, ProductCategory, ProductType};
use crate::store::Features;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CatalogFile {
    #[serde(default)]
    pub groups: Vec<Group>,
    #[serde(default)]
    pub products: Vec<Product>,
    #[serde(default)]
    pub offerings: Vec<Offering>,
    #[serde(default)]
    pub catalogs: Vec<Catalog>,
    #[serde(default)]
    pub assignments: Vec<Assignment>,
    #[serde(default)]
    pub tax_rates: Vec<CountryTaxes>,
    /// Taxes of customers whose billing address names no country.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_tax_country: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Group {
    pub key: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub category: ProductCategory,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internal_description: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Product {
    pub key: String,
    pub internal_name: String,
    #[serde(rename = "type")]
    pub product_type: ProductType,
    pub category: ProductCategory,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_provider_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<Features>,
    /// The License.type of licenses a LICENSE product creates (e.g.
    /// PBX_USER_LEVEL); EXTERNAL_PRODUCT products create EXTERNAL_PRODUCT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license_type: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Offering {
    pub key: String,
    #[serde(default = "available")]
    pub status: OfferingStatus,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rich_content: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub usp_list: Vec<String>,
    /// key of the product sold
    pub product: String,
    /// key of the group, if any
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    pub price: Price,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_url: Option<String>,
}

fn available() -> OfferingStatus {
    OfferingStatus::Available
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Catalog {
    pub key: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The organisation's default: customers without an assignment order
    /// from it.
    #[serde(default)]
    pub default: bool,
    /// keys of its offerings, in the order customers see them
    pub offerings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Assignment {
    /// the customer's id, or `rid_` and its referenceId
    pub customer: String,
    /// key of the catalog
    pub catalog: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CountryTaxes {
    /// ISO 3166-1 alpha-2
    pub country: String,
    pub rates: Vec<TaxRate>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaxRate {
    /// shown in the order's tax breakdown, e.g. "VAT 25%"
    pub description: String,
    /// hundredths of a percent: 2500 is 25 %
    pub rate_basis_points: u32,
}

/// A problem with the file: where, and what.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() { write!(f, "{}", self.message) } else { write!(f, "{}: {}", self.path, self.message) }
    }
}

/// Reads `text` as JSON when `json` is set, else as YAML. A syntax or shape
/// error names the path of the failing field and, where the parser knows
/// it, the line and column.
pub fn parse(text: &str, json: bool) -> Result<CatalogFile, Problem> {
    let problem = |path: String, message: String| Problem { path: if path == "." { String::new() } else { path }, message };
    if json {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(|e| problem(e.path().to_string(), e.into_inner().to_string()))
    } else {
        let de = yaml_serde::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(|e| problem(e.path().to_string(), e.into_inner().to_string()))
    }
}

const MAX_TEXT: usize = 255;
const MAX_DESCRIPTION: usize = 4000;
const MAX_RICH: usize = 20000;

impl CatalogFile {
    /// Every rule the file breaks, each naming its path. References between
    /// entities are checked against the file and `known` (keys already
    /// stored: groups, products, catalogs).
    pub fn check(&mut self, known: &dyn Fn(&str, &str) -> bool) -> Vec<Problem> {
        let mut bad = vec![];
        let mut err = |path: String, message: &str| bad.push(Problem { path, message: message.to_string() });
        let group_keys: Vec<String> = self.groups.iter().map(|g| g.key.clone()).collect();
        let product_keys: Vec<String> = self.products.iter().map(|p| p.key.clone()).collect();
        let offering_keys: Vec<String> = self.offerings.iter().map(|o| o.key.clone()).collect();
        let catalog_keys: Vec<String> = self.catalogs.iter().map(|c| c.key.clone()).collect();
        for (kind, keys) in [("groups", &group_keys), ("products", &product_keys), ("offerings", &offering_keys), ("catalogs", &catalog_keys)] {
            for (i, k) in keys.iter().enumerate() {
                if !valid_key(k) {
                    err(format!("{kind}[{i}].key"), "must be 1 to 100 of a-z, 0-9, '-', '_' and '.'");
                }
                if keys[..i].contains(k) {
                    err(format!("{kind}[{i}].key"), "repeats an earlier key");
                }
            }
        }
        for (i, g) in self.groups.iter().enumerate() {
            text(&mut err, format!("groups[{i}].name"), Some(&g.name), MAX_TEXT);
            text(&mut err, format!("groups[{i}].description"), g.description.as_deref(), MAX_DESCRIPTION);
            text(&mut err, format!("groups[{i}].internalDescription"), g.internal_description.as_deref(), MAX_DESCRIPTION);
        }
        for (i, p) in self.products.iter().enumerate() {
            text(&mut err, format!("products[{i}].internalName"), Some(&p.internal_name), MAX_TEXT);
            text(&mut err, format!("products[{i}].networkProviderId"), p.network_provider_id.as_deref(), MAX_TEXT);
            if !category_fits(p.product_type, p.category) {
                err(format!("products[{i}].category"), "does not fit the product's type");
            }
            match (p.product_type, &p.license_type) {
                (ProductType::License, None) => err(format!("products[{i}].licenseType"), "is required for a LICENSE product"),
                // (an add-on may carry a license: a softphone with a PBX seat)
                (ProductType::License | ProductType::SubscriptionAddon, Some(t)) if !valid_license_type(t) => {
                    err(format!("products[{i}].licenseType"), "must be 1 to 64 of A-Z, 0-9 and '_'")
                }
                (ProductType::License | ProductType::SubscriptionAddon, Some(_)) => {}
                (_, Some(_)) => err(format!("products[{i}].licenseType"), "is only for LICENSE and SUBSCRIPTION_ADDON products"),
                (_, None) => {}
            }
            if let Some(f) = &p.features {
                for (j, c) in f.countries.iter().enumerate() {
                    if isocountry::CountryCode::for_alpha3(c).is_err() {
                        err(format!("products[{i}].features.countries[{j}]"), "must be an ISO 3166-1 alpha-3 code");
                    }
                }
                if f.data_mb.is_some_and(|d| !(d >= 0.0 && d.is_finite())) {
                    err(format!("products[{i}].features.dataMb"), "must be 0 or more");
                }
                if f.included_call_seconds.is_some_and(|v| v < 0) || f.included_sms.is_some_and(|v| v < 0) {
                    err(format!("products[{i}].features"), "includedCallSeconds and includedSms must be 0 or more");
                }
                if f.validity_days.is_some_and(|v| v < 1) {
                    err(format!("products[{i}].features.validityDays"), "must be 1 or more");
                }
            }
        }
        for (i, o) in self.offerings.iter_mut().enumerate() {
            text(&mut err, format!("offerings[{i}].name"), Some(&o.name), MAX_TEXT);
            text(&mut err, format!("offerings[{i}].description"), o.description.as_deref(), MAX_DESCRIPTION);
            text(&mut err, format!("offerings[{i}].richContent"), o.rich_content.as_deref(), MAX_RICH);
            for (j, u) in o.usp_list.iter().enumerate() {
                text(&mut err, format!("offerings[{i}].uspList[{j}]"), Some(u), MAX_TEXT);
            }
            if let Some(url) = &o.image_url
                && (!(url.starts_with("https://") || url.starts_with("http://")) || url.len() > 2000 || url.contains(char::is_whitespace))
            {
                err(format!("offerings[{i}].imageUrl"), "must be an http(s) URL of at most 2000 characters");
            }
            if !product_keys.contains(&o.product) && !known("product", &o.product) {
                err(format!("offerings[{i}].product"), "names no product of this file or of the stored catalog");
            }
            if let Some(g) = &o.group
                && !group_keys.contains(g)
                && !known("group", g)
            {
                err(format!("offerings[{i}].group"), "names no group of this file or of the stored catalog");
            }
            for (path, message) in o.price.check() {
                err(format!("offerings[{i}].price.{path}"), &message);
            }
        }
        let defaults = self.catalogs.iter().filter(|c| c.default).count();
        for (i, c) in self.catalogs.iter().enumerate() {
            text(&mut err, format!("catalogs[{i}].name"), Some(&c.name), MAX_TEXT);
            text(&mut err, format!("catalogs[{i}].description"), c.description.as_deref(), MAX_DESCRIPTION);
            if c.default && defaults > 1 {
                err(format!("catalogs[{i}].default"), "only one catalog can be the default");
            }
            for (j, k) in c.offerings.iter().enumerate() {
                if !offering_keys.contains(k) && !known("offering", k) {
                    err(format!("catalogs[{i}].offerings[{j}]"), "names no offering of this file or of the stored catalog");
                } else if c.offerings[..j].contains(k) {
                    err(format!("catalogs[{i}].offerings[{j}]"), "repeats an earlier offering");
                }
            }
        }
        for (i, a) in self.assignments.iter().enumerate() {
            if !catalog_keys.contains(&a.catalog) && !known("catalog", &a.catalog) {
                err(format!("assignments[{i}].catalog"), "names no catalog of this file or of the stored catalog");
            }
            if self.assignments[..i].iter().any(|b| b.customer == a.customer) {
                err(format!("assignments[{i}].customer"), "is assigned twice");
            }
        }
        for (i, t) in self.tax_rates.iter().enumerate() {
            if isocountry::CountryCode::for_alpha2(&t.country).is_err() {
                err(format!("taxRates[{i}].country"), "must be an ISO 3166-1 alpha-2 code");
            }
            if self.tax_rates[..i].iter().any(|u| u.country == t.country) {
                err(format!("taxRates[{i}].country"), "repeats an earlier country");
            }
            for (j, r) in t.rates.iter().enumerate() {
                text(&mut err, format!("taxRates[{i}].rates[{j}].description"), Some(&r.description), MAX_TEXT);
                if r.rate_basis_points > 10_000 {
                    err(format!("taxRates[{i}].rates[{j}].rateBasisPoints"), "must be 0 to 10000 (100 %)");
                }
            }
        }
        if let Some(c) = &self.default_tax_country
            && isocountry::CountryCode::for_alpha2(c).is_err()
        {
            err("defaultTaxCountry".into(), "must be an ISO 3166-1 alpha-2 code");
        }
        bad
    }
}

fn text(err: &mut impl FnMut(String, &str), path: String, v: Option<&str>, max: usize) {
    match v {
        Some(t) if t.trim().is_empty() => err(path, "must not be empty"),
        Some(t) if t.chars().count() > max => err(path, &format!("must be at most {max} characters")),
        _ => {}
    }
}

fn valid_key(k: &str) -> bool {
    (1..=100).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b))
}

fn valid_license_type(t: &str) -> bool {
    (1..=64).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Which categories each product type may carry.
pub fn category_fits(t: ProductType, c: ProductCategory) -> bool {
    use ProductCategory as C;
    match t {
        ProductType::Subscription => matches!(c, C::SubscriptionCell | C::SubscriptionDataSim | C::SubscriptionBroadband | C::SubscriptionM2m | C::TravelEsim),
        ProductType::SubscriptionAddon => matches!(c, C::ExtraData | C::TravelEsimPackage | C::Abroad | C::ExternalProductAddon),
        ProductType::License => true,
        ProductType::ExternalProduct => matches!(c, C::ExternalProduct | C::ExternalProductAddon),
        ProductType::SimCard => matches!(c, C::SimCard),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_errors_name_the_path_and_line() {
        let yaml = "offerings:\n  - key: a\n    name: A\n    product: p\n    price:\n      currency: SEK\n      priceType: WEEKLY\n";
        let e = parse(yaml, false).unwrap_err();
        assert_eq!(e.path, "offerings[0].price.priceType");
        assert!(e.message.contains("line 7"), "{e}");
        let e = parse(r#"{"groups": [{"key": "g", "nam": "x"}]}"#, true).unwrap_err();
        assert_eq!(e.path, "groups[0].nam");
        assert!(e.message.contains("unknown field `nam`"), "{e}");
    }

    #[test]
    fn rules_name_each_failing_path() {
        let yaml = r#"
products:
  - {key: p, internalName: P, type: SIM_CARD, category: PRODUCT_CATEGORY_SUBSCRIPTION_CELL}
offerings:
  - {key: o, name: O, product: nope, price: {currency: SEK, priceType: ONE_TIME}}
catalogs:
  - {key: c, name: C, offerings: [o, o, x]}
taxRates:
  - {country: SE, rates: [{description: VAT, rateBasisPoints: 10001}]}
"#;
        let mut f = parse(yaml, false).unwrap();
        let paths: Vec<String> = f.check(&|_, _| false).into_iter().map(|p| p.path).collect();
        assert_eq!(
            paths,
            ["products[0].category", "offerings[0].product", "catalogs[0].offerings[1]", "catalogs[0].offerings[2]", "taxRates[0].rates[0].rateBasisPoints"]
        );
    }
}
