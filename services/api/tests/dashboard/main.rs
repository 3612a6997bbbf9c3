//! The admin dashboard: plain HTTP tests of its session cookie, CSRF and
//! headers, and flows in a real headless Chromium (Debian's `chromium`
//! driven through `chromedriver`; `scripts/tools/chromium.sh` installs both).

mod admin_flow;
mod http;
mod layout;
mod observations;
mod people;
mod read_only;
mod scale;
mod settings;
mod sso;
mod support;
