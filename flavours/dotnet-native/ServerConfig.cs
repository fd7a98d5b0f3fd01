using System.Globalization;
using System.Text;

namespace Kite.DotnetNative;

// The kite-acceptor file of one cell: the cpp flavour's (bench/roundtrip/
// cpp_server.cpp) without its [app] table, since the application here is C#.
internal static class ServerConfig
{
    public const string ServerCompId = "KITE";

    public static string ClientCompId(int k) => "BENCH" + k.ToString(CultureInfo.InvariantCulture);

    public static string Toml(Options o)
    {
        var t = new StringBuilder();
        string I(int v) => v.ToString(CultureInfo.InvariantCulture);
        t.Append("# kite-dotnet-native: the kite-acceptor file of this cell.\n");
        t.Append("[engine]\n");
        t.Append("model = ").Append(Quoted(o.Model)).Append('\n');
        t.Append("transport = ").Append(Quoted(o.Transport)).Append('\n');
        t.Append("bind = ").Append(Quoted(o.Bind)).Append('\n');
        t.Append("port = ").Append(I(o.Port)).Append('\n');
        t.Append("workers = ").Append(I(o.Workers)).Append('\n');
        t.Append("cores = [").Append(string.Join(", ", o.Cores.ConvertAll(I))).Append("]\n");
        t.Append("coordinator_core = ").Append(I(o.CoordinatorCore)).Append('\n');
        t.Append("idle = ").Append(o.Spin ? "\"busy_spin\"" : "\"block\"").Append('\n');
        t.Append("busy_poll_usecs = ").Append(I(o.BusyPollUsecs)).Append('\n');
        // Room for a client's reconnect while its old connection is being closed.
        t.Append("max_connections = ").Append(I(o.Sessions + 4)).Append('\n');
        // Every flavour does the same session work: the client resets its
        // numbers at each Logon; no dictionary validation, no SendingTime check.
        t.Append("\n[defaults]\n");
        t.Append("BeginString = \"FIX.4.4\"\n");
        t.Append("SenderCompID = ").Append(Quoted(ServerCompId)).Append('\n');
        t.Append("ResetOnLogon = true\n");
        t.Append("ResetOnDisconnect = true\n");
        t.Append("UseDataDictionary = false\n");
        t.Append("CheckLatency = false\n");
        t.Append("StoreKind = ").Append(Quoted(o.Store)).Append('\n');
        t.Append("FileStorePath = ").Append(Quoted(o.StoreDir.Length == 0 ? "." : o.StoreDir)).Append('\n');
        for (int k = 0; k < o.Sessions; ++k)
            t.Append("\n[[session]]\nTargetCompID = ").Append(Quoted(ClientCompId(k))).Append('\n');
        return t.ToString();
    }

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
