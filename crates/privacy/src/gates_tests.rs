//! Proves each secret rule's keywords from its pattern: every text the
//! pattern matches contains one of them (ASCII case ignored), so a gate
//! that stays closed never hides a secret. The proof walks the pattern's
//! syntax tree (regex-syntax, the parser the regex crate itself uses, so
//! case folding is exactly the engine's): a literal run is enumerated, an
//! alternation needs every branch proven, a concatenation one part.

use regex_syntax::hir::{Class, Hir, HirKind};

use crate::{rule_set::FOLDS_TO_ASCII, secrets::RULES};

/// More strings than this in one enumerated run: the run starts over.
const MAX_STRINGS: usize = 4096;

/// Every string `hir` can match, ASCII-lowercased, when there are few.
fn exact(hir: &Hir) -> Option<Vec<String>> {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Some(vec![String::new()]),
        HirKind::Literal(lit) => Some(vec![String::from_utf8(lit.0.to_vec()).ok()?.to_ascii_lowercase()]),
        HirKind::Class(Class::Unicode(class)) => {
            let mut chars: Vec<String> = Vec::new();
            for range in class.iter() {
                if (range.end() as u32 - range.start() as u32) > 16 {
                    return None;
                }
                for c in range.start()..=range.end() {
                    chars.push(c.to_ascii_lowercase().to_string());
                }
            }
            chars.sort();
            chars.dedup();
            (chars.len() <= 16).then_some(chars)
        }
        HirKind::Class(Class::Bytes(class)) => {
            let mut chars: Vec<String> = Vec::new();
            for range in class.iter() {
                if range.end() - range.start() > 16 {
                    return None;
                }
                for b in range.start()..=range.end() {
                    chars.push((b.to_ascii_lowercase() as char).to_string());
                }
            }
            chars.sort();
            chars.dedup();
            (chars.len() <= 16).then_some(chars)
        }
        HirKind::Capture(cap) => exact(&cap.sub),
        HirKind::Repetition(rep) if rep.max == Some(rep.min) || (rep.min == 0 && rep.max == Some(1)) => {
            let sub = exact(&rep.sub)?;
            let times = rep.max.unwrap_or(rep.min);
            let (mut power, mut all) = (vec![String::new()], Vec::new());
            for n in 0..=times {
                if n >= rep.min {
                    all.extend(power.iter().cloned());
                }
                if n < times {
                    power = cross(&power, &sub)?;
                }
            }
            (all.len() <= MAX_STRINGS).then_some(all)
        }
        HirKind::Alternation(subs) => {
            let mut all = Vec::new();
            for sub in subs {
                all.extend(exact(sub)?);
            }
            (all.len() <= MAX_STRINGS).then_some(all)
        }
        HirKind::Concat(subs) => subs
            .iter()
            .try_fold(vec![String::new()], |acc, sub| cross(&acc, &exact(sub)?)),
        HirKind::Repetition(_) => None,
    }
}

fn cross(left: &[String], right: &[String]) -> Option<Vec<String>> {
    if left.len() * right.len() > MAX_STRINGS {
        return None;
    }
    Some(
        left.iter()
            .flat_map(|l| right.iter().map(move |r| format!("{l}{r}")))
            .collect(),
    )
}

fn covered(strings: &[String], keywords: &[String]) -> bool {
    strings
        .iter()
        .all(|s| keywords.iter().any(|k| s.contains(k.as_str())))
}

/// Whether every string `hir` matches contains one of `keywords`.
fn proven(hir: &Hir, keywords: &[String]) -> bool {
    if exact(hir).is_some_and(|strings| covered(&strings, keywords)) {
        return true;
    }
    match hir.kind() {
        HirKind::Capture(cap) => proven(&cap.sub, keywords),
        HirKind::Repetition(rep) => rep.min >= 1 && proven(&rep.sub, keywords),
        HirKind::Alternation(subs) => subs.iter().all(|sub| proven(sub, keywords)),
        HirKind::Concat(subs) => {
            // One part proven, or a run of enumerable parts whose strings
            // all contain a keyword (checked at the run's end: a longer
            // string keeps every keyword a shorter one held).
            let mut run = vec![String::new()];
            for sub in subs {
                if proven(sub, keywords) {
                    return true;
                }
                let strings = exact(sub);
                if let Some(longer) = strings.as_deref().and_then(|s| cross(&run, s)) {
                    run = longer;
                    continue;
                }
                if covered(&run, keywords) {
                    return true;
                }
                run = strings.unwrap_or_else(|| vec![String::new()]);
            }
            covered(&run, keywords)
        }
        _ => false,
    }
}

fn keywords_of(words: &[&str]) -> Vec<String> {
    words
        .iter()
        .map(|w| w.to_ascii_lowercase())
        .chain(FOLDS_TO_ASCII.iter().map(|l| l.to_string()))
        .collect()
}

#[test]
fn every_rule_with_keywords_has_them_proven_by_its_pattern() {
    for (i, rule) in RULES.iter().enumerate() {
        if rule.keywords.is_empty() {
            continue;
        }
        let hir = regex_syntax::parse(rule.pattern).expect("rule parses");
        assert!(
            proven(&hir, &keywords_of(rule.keywords)),
            "rule {i} ({}): a match need not contain any of {:?}",
            rule.kind,
            rule.keywords
        );
    }
}

/// The proof is not a rubber stamp: it refuses a keyword a match can avoid.
#[test]
fn a_keyword_a_match_can_avoid_is_refused() {
    let cases: &[(&str, &[&str])] = &[
        (r"(?-u:\b)sk-ant-[A-Za-z0-9_\-]{20,}", &["ant-x"]),
        (r"(?:AKIA|ASIA)[A-Z0-9]{16}", &["akia"]),
        (r"(?i)secret_?access_?key", &["secret_access"]),
        (r"x-[a-z]*(?:token|auth)", &["token"]),
        (r"(?:sk)?_live_", &["sk"]),
        // Case-insensitive `k` also matches the Kelvin sign.
        (r"(?i)token", &["token"]),
    ];
    for (pattern, words) in cases {
        let hir = regex_syntax::parse(pattern).expect("parses");
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        assert!(!proven(&hir, &words), "{pattern}: {words:?} should not be proven");
    }
    let proven_cases: [(&str, &[&str]); 2] = [
        (r"(?i)token", &["token"]),
        (r"(?:AKIA|ASIA)[A-Z0-9]{16}", &["akia", "asia"]),
    ];
    for (pattern, words) in proven_cases {
        let hir = regex_syntax::parse(pattern).expect("parses");
        assert!(proven(&hir, &keywords_of(words)), "{pattern}: {words:?}");
    }
}
