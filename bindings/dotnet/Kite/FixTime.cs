using System;

namespace Kite;

/// <summary>FIX UTCTimestamp text from UTC nanoseconds since the epoch, without DateTime or allocation.</summary>
public static class FixTime
{
    /// <summary>Length of "YYYYMMDD-HH:MM:SS.sss".</summary>
    public const int MillisLength = 21;

    /// <summary>Writes "YYYYMMDD-HH:MM:SS.sss" and returns 21; 0 when dest is too small or the time is before 1970.</summary>
    public static int FormatMillis(long utcNs, Span<byte> dest)
    {
        if (dest.Length < MillisLength || utcNs < 0) return 0;
        long ms = utcNs / 1_000_000;
        long days = ms / 86_400_000;
        int msOfDay = (int)(ms % 86_400_000);
        CivilFromDays(days, out int y, out int m, out int d);
        Digits(dest, 0, y, 4);
        Digits(dest, 4, m, 2);
        Digits(dest, 6, d, 2);
        dest[8] = (byte)'-';
        Digits(dest, 9, msOfDay / 3_600_000, 2);
        dest[11] = (byte)':';
        Digits(dest, 12, msOfDay / 60_000 % 60, 2);
        dest[14] = (byte)':';
        Digits(dest, 15, msOfDay / 1000 % 60, 2);
        dest[17] = (byte)'.';
        Digits(dest, 18, msOfDay % 1000, 3);
        return MillisLength;
    }

    private static void Digits(Span<byte> dest, int at, int value, int width)
    {
        for (int i = at + width - 1; i >= at; --i)
        {
            dest[i] = (byte)('0' + value % 10);
            value /= 10;
        }
    }

    // Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
    // civil_from_days, for non-negative days).
    private static void CivilFromDays(long z, out int year, out int month, out int day)
    {
        z += 719468;
        long era = z / 146097;
        long doe = z - era * 146097;
        long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        long mp = (5 * doy + 2) / 153;
        day = (int)(doy - (153 * mp + 2) / 5 + 1);
        month = (int)(mp < 10 ? mp + 3 : mp - 9);
        year = (int)(yoe + era * 400 + (month <= 2 ? 1 : 0));
    }
}
