//! An experiment's figures from its items: each scorer's mean and spread,
//! and latency percentiles.

use heddle_wire::experiments::{ItemScore, ScorerSummary};

/// Each named scorer's summary over the items' scores, in `names`' order
/// (a scorer with no score yet is left out).
pub(super) fn per_scorer(names: &[String], items: &[Vec<ItemScore>]) -> Vec<ScorerSummary> {
    names
        .iter()
        .filter_map(|name| {
            let values: Vec<f64> = items
                .iter()
                .filter_map(|scores| scores.iter().find(|score| &score.scorer == name))
                .map(|score| score.value)
                .collect();
            summarise(name, &values)
        })
        .collect()
}

fn summarise(name: &str, values: &[f64]) -> Option<ScorerSummary> {
    if values.is_empty() {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = match values.len() {
        1 => 0.0,
        _ => values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0),
    };
    Some(ScorerSummary {
        scorer: name.to_owned(),
        count: values.len() as u64,
        mean,
        stddev: variance.sqrt(),
        min: values.iter().copied().fold(f64::INFINITY, f64::min),
        max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// The 50th and 95th percentiles (nearest rank) of `values`, sorted here.
pub(super) fn percentiles(values: &mut [u64]) -> (Option<u64>, Option<u64>) {
    if values.is_empty() {
        return (None, None);
    }
    values.sort_unstable();
    let rank = |p: f64| {
        let index = ((p * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1;
        values[index]
    };
    (Some(rank(0.5)), Some(rank(0.95)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(scorer: &str, value: f64) -> ItemScore {
        ItemScore {
            scorer: scorer.into(),
            value,
            reason: String::new(),
        }
    }

    #[test]
    fn means_and_spreads_per_scorer_in_the_order_given() {
        let items = vec![
            vec![score("exact", 1.0), score("regex", 0.0)],
            vec![score("exact", 0.0), score("regex", 0.0)],
            vec![score("exact", 1.0)],
        ];
        let names = vec![
            "regex".to_string(),
            "exact".to_string(),
            "judge".to_string(),
        ];
        let summary = per_scorer(&names, &items);
        assert_eq!(summary.len(), 2, "a scorer with no score is left out");
        assert_eq!(summary[0].scorer, "regex");
        assert_eq!(
            (summary[0].count, summary[0].mean, summary[0].stddev),
            (2, 0.0, 0.0)
        );
        assert_eq!(summary[1].scorer, "exact");
        assert_eq!(summary[1].count, 3);
        assert!((summary[1].mean - 2.0 / 3.0).abs() < 1e-12);
        // Sample standard deviation of 1, 0, 1.
        assert!((summary[1].stddev - (1.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!((summary[1].min, summary[1].max), (0.0, 1.0));
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        assert_eq!(percentiles(&mut []), (None, None));
        assert_eq!(percentiles(&mut [7]), (Some(7), Some(7)));
        let mut values: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(percentiles(&mut values), (Some(50), Some(95)));
    }
}
