//! Chance (RULES 4.3): one seeded generator per build for `{{random}}` and `{{roll}}`, a seed per
//! session, position and occurrence for `{{pick}}`, and the dice of `{{roll}}`.

const MAX_DICE: u64 = 1_000;
const MAX_SIDES: u64 = 1_000_000_000;
const MAX_DICE_MODIFIER: i64 = 1_000_000_000_000;
/// Keeps the `random` stream apart from the `pick` seeds, which share the session seed.
pub(super) const RANDOM_STREAM: u64 = 0x7261_6e64_6f6d_2121;

/// SplitMix64: a small, fast generator, good enough to choose among a few
/// options reproducibly.
pub(super) struct SplitMix64(pub(super) u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`; multiply-shift, whose bias (below n / 2^64) does not matter here.
    pub(super) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// `NdM+K`: N dice of M sides plus K.
pub(super) struct Dice {
    count: u64,
    sides: u64,
    modifier: i64,
}

impl Dice {
    pub(super) fn parse(text: &str) -> Option<Dice> {
        // `1000d1000000000+1000000000000` is the longest that can be valid.
        if text.len() > 32 {
            return None;
        }
        let (count, rest) = match text.find(['d', 'D']) {
            Some(at) => (&text[..at], &text[at + 1..]),
            None => ("", text),
        };
        let count = if count.is_empty() {
            1
        } else {
            parse_digits(count)?
        };
        let (sides, modifier) = match rest.find(['+', '-']) {
            Some(at) => {
                let magnitude = parse_digits(&rest[at + 1..])?;
                let magnitude = i64::try_from(magnitude).ok()?;
                let sign = if rest[at..].starts_with('-') { -1 } else { 1 };
                (&rest[..at], sign * magnitude)
            }
            None => (rest, 0),
        };
        let sides = parse_digits(sides)?;
        let fits = (1..=MAX_DICE).contains(&count)
            && (1..=MAX_SIDES).contains(&sides)
            && modifier.abs() <= MAX_DICE_MODIFIER;
        fits.then_some(Dice {
            count,
            sides,
            modifier,
        })
    }

    pub(super) fn roll(&self, random: &mut SplitMix64) -> i128 {
        let dice: i128 = (0..self.count)
            .map(|_| i128::from(random.below(self.sides)) + 1)
            .sum();
        dice + i128::from(self.modifier)
    }
}

fn parse_digits(text: &str) -> Option<u64> {
    let text = text.trim();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}
