//! The processor pipeline of RULES 5: one ordered list of processors runs every build.
//! A processor declares what it is (a [`ProcessorDescriptor`]) and executes over a
//! [`PipelineContext`]; the [`Pipeline`] orders them by priority, resolves each one's settings
//! (defaults, then the model profile's, then the preset's) and runs the enabled ones.

mod config;
mod context;
mod message;
mod result;

pub use config::*;
pub use context::*;
pub use message::*;
pub use result::*;

use crate::assets::AssetSource;
use crate::cache::BuildCache;
use crate::model::{AgentPreset, Session};
use crate::profiles::ModelProfile;
use crate::EngineError;

/// One step of the pipeline. Implementations are stateless: everything a build needs is in the
/// context, everything it settles goes back into it.
pub trait Processor: Send + Sync {
    fn descriptor(&self) -> ProcessorDescriptor;
    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        config: &ResolvedConfig,
    ) -> Result<(), EngineError>;
}

/// The registry: processors in priority order (lower runs first, ties in registration order).
pub struct Pipeline {
    /// Each processor with its descriptor, asked for once at registration.
    processors: Vec<(ProcessorDescriptor, Box<dyn Processor>)>,
}

impl Default for Pipeline {
    fn default() -> Self {
        Self::builtin()
    }
}

impl Pipeline {
    /// An empty pipeline, for tests and embedders that pick their own processors.
    pub fn empty() -> Self {
        Pipeline {
            processors: Vec::new(),
        }
    }

    /// Every built-in processor.
    pub fn builtin() -> Self {
        let mut pipeline = Pipeline::empty();
        for p in crate::processors::builtin() {
            pipeline.register(p);
        }
        pipeline
    }

    /// Adds a processor (plugins use priority 900). A second processor with an id already
    /// registered replaces the first.
    pub fn register(&mut self, processor: Box<dyn Processor>) {
        let descriptor = processor.descriptor();
        self.processors.retain(|(d, _)| d.id != descriptor.id);
        self.processors.push((descriptor, processor));
    }

    /// Descriptors in default priority order, for the UI's pipeline panel.
    pub fn descriptors(&self) -> Vec<ProcessorDescriptor> {
        let mut d: Vec<_> = self.processors.iter().map(|(d, _)| d.clone()).collect();
        d.sort_by_key(|d| d.priority);
        d
    }

    /// The settings each processor would run with for this preset and model profile, in the
    /// order they would run.
    pub fn resolve(&self, preset: &AgentPreset, profile: &ModelProfile) -> Vec<ResolvedConfig> {
        self.resolve_with(preset, profile)
            .into_iter()
            .map(|(config, _)| config)
            .collect()
    }

    fn resolve_with(
        &self,
        preset: &AgentPreset,
        profile: &ModelProfile,
    ) -> Vec<(ResolvedConfig, &dyn Processor)> {
        let mut resolved: Vec<_> = self
            .processors
            .iter()
            .map(|(d, p)| (ResolvedConfig::merge(d, profile, preset), p.as_ref()))
            .collect();
        // Stable: equal priorities keep registration order.
        resolved.sort_by_key(|(c, _)| c.priority);
        resolved
    }

    /// Runs one build.
    pub fn run<'s>(&self, request: &BuildRequest<'_, 's>) -> Result<BuildResult<'s>, EngineError> {
        let profile = request.profile();
        let mut ctx = PipelineContext::new(request, &profile);
        for config in request.preset.processors.iter().flatten() {
            if !self.processors.iter().any(|(d, _)| d.id == config.id) {
                ctx.warn(
                    "pipeline",
                    format!("preset settings name unknown processor \"{}\"", config.id),
                );
            }
        }
        for (config, processor) in self.resolve_with(request.preset, &profile) {
            for note in &config.notes {
                ctx.warn(&config.id, note.clone());
            }
            if config.enabled {
                processor.execute(&mut ctx, &config)?;
            }
        }
        Ok(ctx.finish())
    }
}

/// Everything one build reads. `'s` is the session's: the result refers to the session (and to
/// nothing else of the request).
pub struct BuildRequest<'a, 's> {
    pub preset: &'a AgentPreset,
    pub session: &'s Session,
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
        let mut profile = crate::profiles::profile_for_model(self.model, self.profiles);
        if let Some(window) = self.options.context_window {
            profile.context_window = window;
        }
        if let Some(reserve) = self.options.reserve {
            profile.reserved_reply = reserve;
        }
        profile
    }
}

/// Runs the built-in pipeline once.
pub fn build<'s>(request: &BuildRequest<'_, 's>) -> Result<BuildResult<'s>, EngineError> {
    Pipeline::builtin().run(request)
}
