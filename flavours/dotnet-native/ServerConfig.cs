using System.Globalization;
using System.Text;

namespace Kite.DotnetNative;

// What the warm-up initiator's file needs: the server's CompID and TOML
// quoting. The acceptor's file is the lab's (Options.AcceptorConfig).
internal static class ServerConfig
{
    public const string ServerCompId = "KITE";

    // A TOML basic string: quotes, backslashes and control characters escaped.
    public static string Quoted(string s)
    {
        var q = new StringBuilder(s.Length + 2).Append('"');
        foreach (char c in s)
        {
            if (c == '"' || c == '\\') q.Append('\\').Append(c);
            else if (c < 0x20 || c == 0x7f) q.Append("\\u").Append(((int)c).ToString("X4", CultureInfo.InvariantCulture));
            else q.Append(c);
        }
        return q.Append('"').ToString();
    }
}
