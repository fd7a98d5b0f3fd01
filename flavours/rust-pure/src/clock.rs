//! UTC timestamps as FIX writes them (YYYYMMDD-HH:MM:SS.sss), rendered per
//! second once and patched with the milliseconds.

use crate::sys;

pub const TIMESTAMP_LEN: usize = 21;

pub struct Clock {
    second: i64,
    text: [u8; TIMESTAMP_LEN],
}

impl Default for Clock {
    fn default() -> Self {
        Clock { second: i64::MIN, text: *b"19700101-00:00:00.000" }
    }
}

/// Year, month, day of a day count since 1970-01-01 (proleptic Gregorian).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    (y, m, d)
}

fn two(out: &mut [u8], v: u32) {
    out[0] = b'0' + (v / 10 % 10) as u8;
    out[1] = b'0' + (v % 10) as u8;
}

impl Clock {
    /// The timestamp of `utc_ns` (nanoseconds since the epoch).
    pub fn render(&mut self, utc_ns: i64) -> &[u8; TIMESTAMP_LEN] {
        let second = utc_ns.div_euclid(1_000_000_000);
        if second != self.second {
            self.second = second;
            let (y, mo, d) = civil_from_days(second.div_euclid(86_400));
            let s = second.rem_euclid(86_400) as u32;
            let t = &mut self.text;
            let y = y.clamp(0, 9999) as u32;
            two(&mut t[0..2], y / 100);
            two(&mut t[2..4], y % 100);
            two(&mut t[4..6], mo);
            two(&mut t[6..8], d);
            two(&mut t[9..11], s / 3600);
            two(&mut t[12..14], s / 60 % 60);
            two(&mut t[15..17], s % 60);
        }
        let ms = (utc_ns.rem_euclid(1_000_000_000) / 1_000_000) as u32;
        self.text[18] = b'0' + (ms / 100) as u8;
        two(&mut self.text[19..21], ms % 100);
        &self.text
    }

    /// The timestamp of now.
    pub fn now(&mut self) -> &[u8; TIMESTAMP_LEN] {
        self.render(sys::realtime_ns())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_utc_with_milliseconds() {
        let mut c = Clock::default();
        assert_eq!(c.render(0), b"19700101-00:00:00.000");
        // 2026-12-01 17:20:16.123 UTC
        assert_eq!(c.render(1_796_145_616_123_456_789), b"20261201-17:20:16.123");
        assert_eq!(c.render(1_796_145_616_999_000_000), b"20261201-17:20:16.999");
        // 2000-02-29 (a leap day) 23:59:59.001
        assert_eq!(c.render(951_868_799_001_000_000), b"20000229-23:59:59.001");
    }
}
