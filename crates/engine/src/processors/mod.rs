//! The built-in processors of SPEC 5, one file each, named by id.

mod injection_assembler;
mod session_loader;
mod token_limiter;

pub use injection_assembler::InjectionAssembler;
pub use session_loader::SessionLoader;
pub use token_limiter::TokenLimiter;

use crate::pipeline::Processor;

/// Every built-in processor, in registration order.
pub fn builtin() -> Vec<Box<dyn Processor>> {
    vec![
        Box::new(SessionLoader),
        Box::new(InjectionAssembler),
        Box::new(TokenLimiter),
    ]
}
