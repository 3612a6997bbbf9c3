//! Single sign-on settings (`CAIRN_OIDC_*`) and the rules that say which
//! identities enter which team, as which role.
//!
//! One team: `CAIRN_OIDC_TEAM` (slug, default `default`) with
//! `CAIRN_OIDC_EMAIL_DOMAINS` and/or `CAIRN_OIDC_GROUPS` (who may enter) and
//! `CAIRN_OIDC_ADMIN_GROUPS` (who enters as admin). Several teams:
//! `CAIRN_OIDC_RULES`, a JSON array of
//! `{"team", "emailDomains", "groups", "adminGroups"}`; the first rule an
//! identity matches decides. A rule must restrict by domain or group: a rule
//! open to anyone with an account at the provider is refused at start.

use cairn_shared::{
    config::{ConfigError, Env, var},
    tenancy::Role,
};
use serde::Deserialize;

#[derive(Clone, Debug)]
pub struct OidcConfig {
    /// The provider's issuer URL; its discovery document is read from
    /// `<issuer>/.well-known/openid-configuration`.
    pub issuer: String,
    pub client_id: String,
    /// Absent for a public client (PKCE alone).
    pub client_secret: Option<String>,
    pub scopes: Vec<String>,
    /// The ID token claim that lists the identity's groups.
    pub groups_claim: String,
    pub rules: Vec<Rule>,
    /// `CAIRN_OIDC_REDIRECT_URL`: where the provider sends the browser back
    /// (default: `/auth/oidc/callback` under the public URL).
    pub redirect_url: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rule {
    /// The team's slug.
    pub team: String,
    #[serde(default)]
    pub email_domains: Vec<String>,
    #[serde(default)]
    pub groups: Vec<String>,
    #[serde(default)]
    pub admin_groups: Vec<String>,
}

/// What the provider vouched for, as the rules read it.
#[derive(Clone, Debug, Default)]
pub struct Claims {
    pub email: Option<String>,
    /// `Some(false)` when the provider says the email is not verified.
    pub email_verified: Option<bool>,
    pub groups: Vec<String>,
}

impl Rule {
    fn domain_ok(&self, claims: &Claims) -> bool {
        if self.email_domains.is_empty() {
            return true;
        }
        let Some(email) = claims
            .email
            .as_deref()
            .filter(|_| claims.email_verified != Some(false))
        else {
            return false;
        };
        let domain = email.rsplit_once('@').map(|(_, d)| d).unwrap_or_default();
        self.email_domains.iter().any(|d| d.eq_ignore_ascii_case(domain))
    }

    fn in_any(&self, list: &[String], claims: &Claims) -> bool {
        claims.groups.iter().any(|g| list.contains(g))
    }

    /// The role this rule gives `claims`, or `None` when it does not admit them.
    pub fn admit(&self, claims: &Claims) -> Option<Role> {
        if !self.domain_ok(claims) {
            return None;
        }
        if self.in_any(&self.admin_groups, claims) {
            return Some(Role::Admin);
        }
        (self.groups.is_empty() || self.in_any(&self.groups, claims)).then_some(Role::Member)
    }
}

impl OidcConfig {
    /// The team and role of the first rule that admits `claims`.
    pub fn admit(&self, claims: &Claims) -> Option<(&str, Role)> {
        self.rules
            .iter()
            .find_map(|r| r.admit(claims).map(|role| (r.team.as_str(), role)))
    }

    /// `None` when `CAIRN_OIDC_ISSUER` is unset (token sign-in only).
    pub fn from_env(env: &dyn Env) -> Result<Option<Self>, ConfigError> {
        let Some(issuer) = var(env, "CAIRN_OIDC_ISSUER")? else {
            return Ok(None);
        };
        let invalid = |name: &'static str, value: &str, reason: &str| ConfigError::Invalid {
            name,
            value: value.into(),
            reason: reason.into(),
        };
        let client_id = var(env, "CAIRN_OIDC_CLIENT_ID")?.ok_or(ConfigError::Missing {
            name: "CAIRN_OIDC_CLIENT_ID",
            hint: "the client id registered for Cairn at the identity provider",
        })?;
        let list = |name: &'static str| -> Result<Vec<String>, ConfigError> {
            Ok(var(env, name)?
                .unwrap_or_default()
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect())
        };
        let rules = match var(env, "CAIRN_OIDC_RULES")? {
            Some(json) => serde_json::from_str::<Vec<Rule>>(&json)
                .map_err(|e| invalid("CAIRN_OIDC_RULES", &json, &e.to_string()))?,
            None => vec![Rule {
                team: var(env, "CAIRN_OIDC_TEAM")?.unwrap_or_else(|| "default".into()),
                email_domains: list("CAIRN_OIDC_EMAIL_DOMAINS")?,
                groups: list("CAIRN_OIDC_GROUPS")?,
                admin_groups: list("CAIRN_OIDC_ADMIN_GROUPS")?,
            }],
        };
        if let Some(open) = rules
            .iter()
            .find(|r| r.email_domains.is_empty() && r.groups.is_empty())
        {
            return Err(invalid(
                "CAIRN_OIDC_RULES",
                &open.team,
                "each team's rule must name email domains or groups: otherwise anyone with an \
                 account at the provider could enter (set CAIRN_OIDC_EMAIL_DOMAINS or CAIRN_OIDC_GROUPS)",
            ));
        }
        let mut scopes = list("CAIRN_OIDC_SCOPES")?;
        if scopes.is_empty() {
            scopes = vec!["openid".into(), "email".into(), "profile".into()];
        }
        Ok(Some(Self {
            issuer: issuer.trim_end_matches('/').to_string(),
            client_id,
            client_secret: var(env, "CAIRN_OIDC_CLIENT_SECRET")?,
            scopes,
            groups_claim: var(env, "CAIRN_OIDC_GROUPS_CLAIM")?.unwrap_or_else(|| "groups".into()),
            rules,
            redirect_url: var(env, "CAIRN_OIDC_REDIRECT_URL")?,
        }))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn claims(email: &str, groups: &[&str]) -> Claims {
        Claims {
            email: Some(email.into()),
            email_verified: None,
            groups: groups.iter().map(|g| g.to_string()).collect(),
        }
    }

    #[test]
    fn one_team_from_plain_settings() {
        let config = OidcConfig::from_env(&env(&[
            ("CAIRN_OIDC_ISSUER", "https://id.acme.test/"),
            ("CAIRN_OIDC_CLIENT_ID", "cairn"),
            ("CAIRN_OIDC_EMAIL_DOMAINS", "acme.test, acme.io"),
            ("CAIRN_OIDC_ADMIN_GROUPS", "platform"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(config.issuer, "https://id.acme.test");
        assert_eq!(
            config.admit(&claims("a@ACME.test", &[])),
            Some(("default", Role::Member))
        );
        assert_eq!(
            config.admit(&claims("a@acme.io", &["platform"])),
            Some(("default", Role::Admin))
        );
        assert_eq!(
            config.admit(&claims("a@evil.test", &["platform"])),
            None,
            "the domain first"
        );
        let unverified = Claims {
            email_verified: Some(false),
            ..claims("a@acme.test", &[])
        };
        assert_eq!(config.admit(&unverified), None);
        assert!(OidcConfig::from_env(&env(&[])).unwrap().is_none());
    }

    #[test]
    fn rules_pick_a_team_by_group_and_an_open_rule_is_refused() {
        let rules = r#"[{"team": "web", "groups": ["web", "web-leads"], "adminGroups": ["web-leads"]},
                        {"team": "data", "emailDomains": ["data.acme.test"]}]"#;
        let config = OidcConfig::from_env(&env(&[
            ("CAIRN_OIDC_ISSUER", "https://id"),
            ("CAIRN_OIDC_CLIENT_ID", "c"),
            ("CAIRN_OIDC_RULES", rules),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(
            config.admit(&claims("x@acme.test", &["web"])),
            Some(("web", Role::Member))
        );
        assert_eq!(
            config.admit(&claims("x@acme.test", &["web-leads"])),
            Some(("web", Role::Admin))
        );
        assert_eq!(
            config.admit(&claims("y@data.acme.test", &[])),
            Some(("data", Role::Member))
        );
        assert_eq!(config.admit(&claims("z@acme.test", &["ops"])), None);
        for open in [vec![("CAIRN_OIDC_RULES", r#"[{"team": "all"}]"#)], vec![]] {
            let mut pairs = vec![("CAIRN_OIDC_ISSUER", "https://id"), ("CAIRN_OIDC_CLIENT_ID", "c")];
            pairs.extend(open);
            assert!(OidcConfig::from_env(&env(&pairs)).is_err(), "{pairs:?}");
        }
        assert!(OidcConfig::from_env(&env(&[("CAIRN_OIDC_ISSUER", "https://id")])).is_err());
    }
}
