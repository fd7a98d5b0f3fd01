using System;
using System.Collections.Generic;
using System.Globalization;

namespace Kite.DotnetNative;

// The server's command line: the flavour contract's placeholders
// (docs/flavours.md), under the names the cpp flavour's bench_roundtrip uses.
internal sealed class Options
{
    public string Transport = "kernel";
    public string Model = "single";
    public string Bind = "127.0.0.1";
    public int Port;
    public int Sessions = 1;
    public int Workers = 1;
    public List<int> Cores = new();
    public int CoordinatorCore = -1;
    public int BusyPollUsecs;
    public bool Spin = true;
    public string Store = "null";
    public string StoreDir = "";
    public string ReadyFile = "";

    public const string Usage =
        "usage: kite-dotnet-native [--version] [--transport T] [--model single|mono|pool|shard] [--bind ADDR]\n" +
        "       [--port N] [--sessions N] [--workers N] [--cores C1,C2,...] [--coordinator-core C]\n" +
        "       [--busy-poll-usecs N] [--idle spin|block] [--store null|memory|file] [--store-dir DIR]\n" +
        "       [--ready-file PATH]";

    // Throws ArgumentException with a message naming the flag.
    public static Options Parse(string[] args)
    {
        var o = new Options();
        for (int i = 0; i < args.Length; ++i)
        {
            string flag = args[i];
            string Value()
            {
                if (i + 1 >= args.Length) throw new ArgumentException($"{flag} needs a value");
                return args[++i];
            }
            int Int(int min)
            {
                string v = Value();
                if (!int.TryParse(v, NumberStyles.None, CultureInfo.InvariantCulture, out int n) || n < min)
                    throw new ArgumentException($"{flag}: '{v}' is not an integer >= {min}");
                return n;
            }
            string OneOf(params string[] allowed)
            {
                string v = Value();
                if (Array.IndexOf(allowed, v) < 0)
                    throw new ArgumentException($"{flag}: '{v}' is not one of {string.Join(", ", allowed)}");
                return v;
            }
            switch (flag)
            {
                case "--transport": o.Transport = Value(); break;
                case "--model": o.Model = OneOf("single", "mono", "pool", "shard"); break;
                case "--bind": o.Bind = Value(); break;
                case "--port": o.Port = Int(0); break;
                case "--sessions": o.Sessions = Int(1); break;
                case "--workers": o.Workers = Int(1); break;
                case "--cores": o.Cores = ParseCores(flag, Value()); break;
                case "--coordinator-core": o.CoordinatorCore = Int(-1); break;
                case "--busy-poll-usecs": o.BusyPollUsecs = Int(0); break;
                case "--idle": o.Spin = OneOf("spin", "block") == "spin"; break;
                case "--store": o.Store = OneOf("null", "memory", "file"); break;
                case "--store-dir": o.StoreDir = Value(); break;
                case "--ready-file": o.ReadyFile = Value(); break;
                default: throw new ArgumentException($"unknown argument '{flag}'");
            }
        }
        if (o.Port > 65535) throw new ArgumentException($"--port: {o.Port} is above 65535");
        return o;
    }

    // "9,10,11": a plain comma list, as the lab passes {cores}.
    private static List<int> ParseCores(string flag, string v)
    {
        var cores = new List<int>();
        if (v.Length == 0) return cores;
        foreach (string part in v.Split(','))
        {
            if (!int.TryParse(part, NumberStyles.None, CultureInfo.InvariantCulture, out int c))
                throw new ArgumentException($"{flag}: '{part}' in '{v}' is not a core number");
            cores.Add(c);
        }
        return cores;
    }
}
