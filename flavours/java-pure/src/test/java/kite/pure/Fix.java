package kite.pure;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Test helpers: FIX text with '|' for SOH, framed with the right BodyLength and CheckSum. */
final class Fix {
    private Fix() {}

    /** "35=D|...|" (body fields, '|' for SOH) framed as FIX.4.4 with BodyLength and CheckSum. */
    static String frame(String body) {
        final String b = body.replace('|', '\u0001');
        final String head = "8=FIX.4.4\u00019=" + b.length() + "\u0001";
        int sum = 0;
        for (char c : (head + b).toCharArray()) sum += c;
        return head + b + String.format("10=%03d\u0001", sum & 0xFF);
    }

    static ByteBuffer buffer(String s) {
        final ByteBuffer b = ByteBuffer.allocateDirect(Math.max(1, s.length())).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < s.length(); i++) b.put(i, (byte) s.charAt(i));
        return b;
    }

    static String text(ByteBuffer b, int at, int n) {
        return Ascii.string(b, at, n).replace('\u0001', '|');
    }
}
