//! rein-format's tests, one binary: the canitoolcall conformance fixtures for every
//! family's parser, tool descriptions, family detection, template goldens, snapshots
//! of prompts and grammars, and the stream parser's properties.

mod canitoolcall;
mod descriptions;
mod family;
mod golden;
mod literals;
mod snapshots;
mod stream;
