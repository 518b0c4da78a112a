//! How far our prompt count has been from the provider's, per model: each reply that reports the
//! provider's prompt tokens adds a sample (the last [`KEPT`] are kept), so a count marked
//! estimated can say how far off it has been. Kept in the app settings, under
//! `calibration:<model>`.

use promptloom_store::Store;
use serde::{Deserialize, Serialize};

use crate::LibraryError;

/// Samples kept per model.
pub const KEPT: usize = 20;

/// One reply's two counts of the same prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sample {
    pub provider: u32,
    pub counted: u32,
}

/// What the samples of one model say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Calibration {
    pub model: String,
    pub samples: Vec<Sample>,
}

impl Calibration {
    /// The last sample.
    pub fn last(&self) -> Option<Sample> {
        self.samples.last().copied()
    }

    /// The provider's count against ours, on average over the samples, in percent of ours: +3.0
    /// means the provider counted 3 % more than we did.
    pub fn mean_difference_percent(&self) -> Option<f64> {
        let usable: Vec<f64> = self
            .samples
            .iter()
            .filter(|s| s.counted > 0)
            .map(|s| (f64::from(s.provider) - f64::from(s.counted)) / f64::from(s.counted) * 100.0)
            .collect();
        (!usable.is_empty()).then(|| usable.iter().sum::<f64>() / usable.len() as f64)
    }
}

fn key(model: &str) -> String {
    format!("calibration:{model}")
}

/// The samples kept for `model`; none yet is an empty calibration.
pub fn get(store: &Store, model: &str) -> Result<Calibration, LibraryError> {
    let kept = store
        .setting(&key(model))?
        .and_then(|text| serde_json::from_str::<Vec<Sample>>(&text).ok())
        .unwrap_or_default();
    Ok(Calibration {
        model: model.to_string(),
        samples: kept,
    })
}

/// Adds a reply's two counts for `model`, keeping the last [`KEPT`].
pub fn add(store: &Store, model: &str, sample: Sample) -> Result<Calibration, LibraryError> {
    let mut calibration = get(store, model)?;
    calibration.samples.push(sample);
    let over = calibration.samples.len().saturating_sub(KEPT);
    calibration.samples.drain(..over);
    let text = serde_json::to_string(&calibration.samples)
        .map_err(|e| LibraryError::Body(e.to_string()))?;
    store.set_setting(&key(model), &text)?;
    Ok(calibration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_samples_are_kept_and_averaged_per_model() {
        let store = Store::open_in_memory().expect("store");
        assert!(get(&store, "gpt-4o").unwrap().samples.is_empty());
        assert_eq!(
            get(&store, "gpt-4o").unwrap().mean_difference_percent(),
            None
        );
        add(
            &store,
            "gpt-4o",
            Sample {
                provider: 103,
                counted: 100,
            },
        )
        .unwrap();
        let c = add(
            &store,
            "gpt-4o",
            Sample {
                provider: 99,
                counted: 100,
            },
        )
        .unwrap();
        assert_eq!(
            c.last(),
            Some(Sample {
                provider: 99,
                counted: 100
            })
        );
        assert!((c.mean_difference_percent().unwrap() - 1.0).abs() < 1e-9);
        for n in 0..30 {
            add(
                &store,
                "gpt-4o",
                Sample {
                    provider: n,
                    counted: 10,
                },
            )
            .unwrap();
        }
        let c = get(&store, "gpt-4o").unwrap();
        assert_eq!(c.samples.len(), KEPT);
        assert_eq!(c.samples[0].provider, 10, "the oldest went first");
        assert!(
            get(&store, "claude-3-5-sonnet").unwrap().samples.is_empty(),
            "per model"
        );
    }
}
