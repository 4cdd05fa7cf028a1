//! What a model's tokens cost: a table of US dollars per million tokens,
//! with defaults for common models (`engine/prices.json`) that a server's
//! own file overrides or extends. The offline model costs nothing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::Usage;

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    /// Cached input tokens (the input price when absent).
    #[serde(default)]
    pub cached_input: Option<f64>,
    pub output: f64,
}

/// Prices by model name.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    prices: BTreeMap<String, Price>,
}

/// Why a price file could not be read.
#[derive(Debug, thiserror::Error)]
#[error("the price table at {path}: {message}")]
pub struct PricesError {
    /// Where in the file (a JSON path).
    pub path: String,
    pub message: String,
}

const DEFAULTS: &str = include_str!("../../prices.json");

impl Default for PriceTable {
    fn default() -> Self {
        // The defaults are checked by a test; an unreadable copy would be
        // an empty table, not a crash.
        PriceTable::parse(DEFAULTS).unwrap_or(PriceTable {
            prices: BTreeMap::new(),
        })
    }
}

impl PriceTable {
    /// Reads a table: `{"model": {"input": 0.15, "cached_input": 0.075,
    /// "output": 0.6}}`; keys starting with `_` are comments.
    pub fn parse(json: &str) -> Result<PriceTable, PricesError> {
        let deserializer = &mut serde_json::Deserializer::from_str(json);
        let raw: BTreeMap<String, serde_json::Value> =
            serde_path_to_error::deserialize(deserializer).map_err(|error| PricesError {
                path: error.path().to_string(),
                message: error.inner().to_string(),
            })?;
        let mut prices = BTreeMap::new();
        for (model, value) in raw {
            if model.starts_with('_') {
                continue;
            }
            let price: Price = serde_json::from_value(value).map_err(|error| PricesError {
                path: model.clone(),
                message: error.to_string(),
            })?;
            let negative = [price.input, price.output, price.cached_input.unwrap_or(0.0)]
                .iter()
                .any(|p| !p.is_finite() || *p < 0.0);
            if negative {
                return Err(PricesError {
                    path: model,
                    message: "prices are zero or more dollars per million tokens".into(),
                });
            }
            prices.insert(model, price);
        }
        Ok(PriceTable { prices })
    }

    /// The defaults with `overrides` put over them.
    pub fn with_overrides(mut self, overrides: PriceTable) -> PriceTable {
        self.prices.extend(overrides.prices);
        self
    }

    /// The price of `model`: its own entry, else the longest entry its
    /// name starts with (dated snapshots cost as their family).
    pub fn price(&self, model: &str) -> Option<&Price> {
        self.prices.get(model).or_else(|| {
            self.prices
                .iter()
                .filter(|(name, _)| model.starts_with(name.as_str()))
                .max_by_key(|(name, _)| name.len())
                .map(|(_, price)| price)
        })
    }

    /// What `usage` cost on `model`; `None` when the model has no price.
    pub fn cost(&self, model: &str, usage: &Usage) -> Option<f64> {
        let price = self.price(model)?;
        let cached = u64::from(usage.cached_tokens.min(usage.prompt_tokens));
        let fresh = u64::from(usage.prompt_tokens) - cached;
        let dollars = fresh as f64 * price.input
            + cached as f64 * price.cached_input.unwrap_or(price.input)
            + f64::from(usage.completion_tokens) * price.output;
        Some(dollars / 1_000_000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_read_and_price_dated_models_as_their_family() {
        let table = PriceTable::parse(DEFAULTS).expect("the default prices read");
        let usage = Usage {
            prompt_tokens: 1_000_000,
            completion_tokens: 1_000_000,
            cached_tokens: 500_000,
        };
        let cost = table.cost("gpt-4o-mini-2024-07-18", &usage).unwrap();
        assert!(
            (cost - (0.5 * 0.15 + 0.5 * 0.075 + 0.6)).abs() < 1e-9,
            "{cost}"
        );
        assert_eq!(table.cost("offline", &usage), Some(0.0));
        assert_eq!(table.cost("my-local-llama", &usage), None);
    }

    #[test]
    fn overrides_win_and_bad_prices_are_refused_with_where() {
        let ours = PriceTable::parse(r#"{"gpt-4o": {"input": 1, "output": 2}}"#).unwrap();
        let table = PriceTable::default().with_overrides(ours);
        assert_eq!(table.price("gpt-4o").unwrap().input, 1.0);
        let error = PriceTable::parse(r#"{"x": {"input": -1, "output": 2}}"#).unwrap_err();
        assert_eq!(error.path, "x");
        let error = PriceTable::parse(r#"{"x": {"input": "free", "output": 2}}"#).unwrap_err();
        assert_eq!(error.path, "x");
        assert!(error.to_string().contains("input") || error.message.contains("invalid type"));
    }
}
