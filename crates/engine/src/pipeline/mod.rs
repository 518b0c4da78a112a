//! The processor pipeline of RULES 5: one ordered list of processors runs every build.
//! A processor declares what it is (a [`ProcessorDescriptor`]) and executes over a
//! [`PipelineContext`]; the [`Pipeline`] orders them by priority, resolves each one's settings
//! (defaults, then the model profile's, then the preset's) and runs the enabled ones.
//!
//! This is the framework only: it knows the [`Processor`] trait and none of its implementations.
//! The built-in processors are registered from above, by the engine's `build` module.

mod built;
mod config;
mod context;
mod generation;
mod history;
mod kinds;
mod message;
mod result;

/// The lorebook's report, which the build result carries (`crate::lorebook::report`).
pub use crate::lorebook::report::*;
pub use built::*;
pub use config::*;
pub use context::*;
pub use generation::*;
pub use history::History;
pub use kinds::*;
pub use message::*;
pub use result::*;

use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::assets::AssetSource;
use crate::cache::BuildCache;
use crate::model::{AgentPreset, Compatibility, ProcessorConfig, Session};
use crate::profiles::{profile_for_model, ModelProfile};
use crate::texts;
use crate::EngineError;

/// One step of the pipeline. Implementations are stateless: everything a build needs is in the
/// context, everything it settles goes back into it.
pub trait Processor: Send + Sync {
    fn descriptor(&self) -> ProcessorDescriptor;
    /// How the processor starts under SillyTavern compatibility (RULES 5.11); none when it
    /// behaves the same either way.
    fn sillytavern(&self) -> Option<CompatDefaults> {
        None
    }
    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        config: &ResolvedConfig,
    ) -> Result<(), EngineError>;
}

/// The registry: processors in priority order (lower runs first, ties in registration order).
pub struct Pipeline {
    /// Each processor with its descriptor and its SillyTavern defaults, asked for once at
    /// registration.
    processors: Vec<Registered>,
    /// The settings the last build ran its processors with, and what they were resolved from:
    /// a rebuild after a template edit resolves nothing again.
    last: Mutex<Option<Arc<Resolved>>>,
}

/// Every processor's settings for one preset's and one profile's processor configs.
struct Resolved {
    compatibility: Compatibility,
    preset: Option<Vec<ProcessorConfig>>,
    profile: Vec<ProcessorConfig>,
    /// Each processor's settings and its position in the registry, in the order they run.
    configs: Vec<(ResolvedConfig, usize)>,
}

impl Resolved {
    /// Whether these settings are the ones `preset` and `profile` resolve to: all that
    /// [`ResolvedConfig::merge`] reads of them is the same.
    fn is_for(&self, preset: &AgentPreset, profile: &ModelProfile) -> bool {
        self.compatibility == preset.compatibility
            && self.preset == preset.processors
            && self.profile == profile.processors
    }
}

impl Pipeline {
    /// An empty pipeline, for tests and embedders that pick their own processors.
    pub fn empty() -> Self {
        Pipeline {
            processors: Vec::new(),
            last: Mutex::new(None),
        }
    }

    /// Adds a processor (plugins use priority 900). A second processor with an id already
    /// registered replaces the first.
    pub fn register(&mut self, processor: Box<dyn Processor>) {
        let descriptor = processor.descriptor();
        *self.last.get_mut().unwrap_or_else(|e| e.into_inner()) = None;
        self.processors.retain(|r| r.descriptor.id != descriptor.id);
        self.processors.push(Registered {
            compat: processor.sillytavern(),
            descriptor,
            processor,
        });
    }

    /// Descriptors in default priority order, for the UI's pipeline panel.
    pub fn descriptors(&self) -> Vec<ProcessorDescriptor> {
        let mut d: Vec<_> = self
            .processors
            .iter()
            .map(|r| r.descriptor.clone())
            .collect();
        d.sort_by_key(|d| d.priority);
        d
    }

    /// What SillyTavern compatibility changes (RULES 5.11): each processor that behaves
    /// differently under it, in default priority order, with its SillyTavern defaults.
    pub fn sillytavern_changes(&self) -> Vec<(ProcessorDescriptor, CompatDefaults)> {
        let mut changes: Vec<_> = self
            .processors
            .iter()
            .filter_map(|r| Some((r.descriptor.clone(), r.compat.clone()?)))
            .collect();
        changes.sort_by_key(|(d, _)| d.priority);
        changes
    }

    /// The settings each processor would run with for this preset and model profile, in the
    /// order they would run.
    pub fn resolve(&self, preset: &AgentPreset, profile: &ModelProfile) -> Vec<ResolvedConfig> {
        self.resolve_with(preset, profile)
            .into_iter()
            .map(|(config, _)| config)
            .collect()
    }

    /// The stages of the pipeline panel (RULES 9.5) for `preset` and `model`: each processor in
    /// the order it would run, with the settings it would run with (each with its origin,
    /// RULES 5.9) and the model profile's own config for it. The profile is the one a build of
    /// `model` gets: the best of `user_profiles`, else the best built-in one.
    pub fn stages(
        &self,
        preset: &AgentPreset,
        model: &str,
        user_profiles: &[ModelProfile],
    ) -> Vec<PipelineStage> {
        let profile = profile_for_model(model, user_profiles);
        self.resolve_with(preset, &profile)
            .into_iter()
            .map(|(resolved, registered)| PipelineStage {
                descriptor: registered.descriptor.clone(),
                sillytavern: registered.compat.clone(),
                model_config: profile
                    .processors
                    .iter()
                    .find(|c| c.id == resolved.id)
                    .cloned(),
                resolved,
            })
            .collect()
    }

    /// Every processor with its resolved settings, in the order they would run (RULES 5.1, 5.9).
    fn resolve_with(
        &self,
        preset: &AgentPreset,
        profile: &ModelProfile,
    ) -> Vec<(ResolvedConfig, &Registered)> {
        self.resolve_indexed(preset, profile)
            .into_iter()
            .map(|(config, i)| (config, &self.processors[i]))
            .collect()
    }

    /// [`Self::resolve_with`] with each processor's position in the registry.
    fn resolve_indexed(
        &self,
        preset: &AgentPreset,
        profile: &ModelProfile,
    ) -> Vec<(ResolvedConfig, usize)> {
        let mut resolved: Vec<_> = self
            .processors
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let config =
                    ResolvedConfig::merge(&r.descriptor, r.compat.as_ref(), profile, preset);
                (config, i)
            })
            .collect();
        // Stable: equal priorities keep registration order.
        resolved.sort_by_key(|(c, _)| c.priority);
        resolved
    }

    /// The settings a build runs with: the last build's when they were resolved from the same
    /// configs, else resolved now and kept.
    fn resolved_for(&self, preset: &AgentPreset, profile: &ModelProfile) -> Arc<Resolved> {
        let lock = || self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(last) = lock().as_ref().filter(|r| r.is_for(preset, profile)) {
            return Arc::clone(last);
        }
        let resolved = Arc::new(Resolved {
            compatibility: preset.compatibility,
            preset: preset.processors.clone(),
            profile: profile.processors.clone(),
            configs: self.resolve_indexed(preset, profile),
        });
        *lock() = Some(Arc::clone(&resolved));
        resolved
    }

    /// Runs one build.
    pub fn run<'s>(&self, request: &BuildRequest<'_, 's>) -> Result<BuildResult<'s>, EngineError> {
        let mut ctx = PipelineContext::new(request, request.profile());
        for config in request.preset.processors.iter().flatten() {
            if !self.processors.iter().any(|r| r.descriptor.id == config.id) {
                ctx.warn("pipeline", texts::UNKNOWN_PROCESSOR.with("id", &config.id));
            }
        }
        // The settings' format is the profile's: the body a provider of that format takes.
        let format = ctx.profile.provider_format;
        for said in ctx.generation.warnings(format, ctx.profile.reserved_reply) {
            ctx.warn(GENERATION_LOG, said);
        }
        let resolved = self.resolved_for(request.preset, &ctx.profile);
        for (config, i) in &resolved.configs {
            for note in &config.notes_said {
                ctx.warn(&config.id, note.clone());
            }
            if config.enabled {
                self.processors[*i].processor.execute(&mut ctx, config)?;
            }
        }
        Ok(ctx.finish())
    }
}

/// A processor in the registry.
struct Registered {
    descriptor: ProcessorDescriptor,
    compat: Option<CompatDefaults>,
    processor: Box<dyn Processor>,
}

/// The name generation settings' warnings are logged under (they belong to no processor).
pub const GENERATION_LOG: &str = "generation";

/// Everything one build reads. `'s` is the session's: the result refers to the session and to
/// the kept rewrites (and to nothing else of the request).
pub struct BuildRequest<'a, 's> {
    pub preset: &'a AgentPreset,
    pub session: &'s Session,
    /// Where the history regex rules' rewrites are kept for the build's messages to borrow, held
    /// beside the session (`BuildCache::kept_rewrites` gives the session's). Without it, a
    /// rewritten message gets a text of its own each build (RULES 5.2).
    pub kept_rewrites: Option<&'s KeptRewrites>,
    pub model: &'a str,
    pub options: &'a BuildOptions,
    /// Shared count cache; the app keeps one for the life of the process.
    pub cache: &'a BuildCache,
    /// User profiles, searched before the built-in ones.
    pub profiles: &'a [ModelProfile],
    /// Where attachment bytes come from.
    pub assets: &'a dyn AssetSource,
}

impl BuildRequest<'_, '_> {
    /// The model profile that applies, with the build's overrides of window and reserve.
    pub fn profile(&self) -> ModelProfile {
        let mut profile = profile_for_model(self.model, self.profiles);
        if let Some(window) = self.options.context_window {
            profile.context_window = window;
        }
        if let Some(reserve) = self.options.reserve {
            profile.reserved_reply = reserve;
        }
        profile
    }
}

/// One processor in the pipeline panel: what it is, the settings it runs with for a preset and
/// model (each with its origin), and the model profile's own config, which is what the preset's
/// config replaces and what a reset goes back to.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct PipelineStage {
    pub descriptor: ProcessorDescriptor,
    /// How it starts under SillyTavern compatibility, when that changes it (RULES 5.11).
    pub sillytavern: Option<CompatDefaults>,
    pub resolved: ResolvedConfig,
    pub model_config: Option<ProcessorConfig>,
}
