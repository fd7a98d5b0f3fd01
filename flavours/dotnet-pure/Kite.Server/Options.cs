using System;
using System.Globalization;
using Kite.Transport;

namespace Kite.Server;

public sealed class UsageException(string message) : Exception(message);

/// <summary>The server's command line: the flavour file's placeholders as flags.</summary>
public sealed class Options
{
    public const string Usage =
        "usage: kite-dotnet-pure [--version | --cost ORDERS] --model single|mono|pool|shard [--transport kernel|onload|vma]\n" +
        "         [--bind ADDR] [--port N] [--sessions N] [--workers N] [--cores C0,C1,..] [--coordinator-core C]\n" +
        "         [--busy-poll-usecs N] [--idle spin|yield|block] [--store null] [--store-dir DIR]\n" +
        "         [--ready-file PATH] [--flavour NAME]";

    public bool Version;
    /// <summary>--cost N: measure the engine's CPU cost over N orders and exit.</summary>
    public int CostOrders;
    public string Model = "single";
    public string Transport = "kernel";
    public string Bind = "127.0.0.1";
    public int Port;
    public int Sessions = 1;
    public int Workers = 1;
    public int[] Cores = { 0 };
    public int CoordinatorCore = -1;
    public int BusyPollUsecs;
    public IdleKind Idle = IdleKind.Spin;
    public string Store = "null";
    public string ReadyFile = "";
    /// <summary>Set when the request is valid but not served here: the `unsupported:` line.</summary>
    public string? Unsupported;

    public static Options Parse(string[] args)
    {
        var o = new Options();
        for (int i = 0; i < args.Length; i++)
        {
            string a = args[i];
            if (a == "--version") { o.Version = true; continue; }
            if (a == "--help" || a == "-h") throw new UsageException("help");
            if (i + 1 >= args.Length) throw new UsageException($"{a} needs a value");
            string v = args[++i];
            switch (a)
            {
                case "--cost": o.CostOrders = Int(a, v, 1, int.MaxValue); break;
                case "--model": o.Model = v; break;
                case "--transport": o.Transport = v; break;
                case "--bind": o.Bind = v; break;
                case "--port": o.Port = Int(a, v, 0, 65535); break;
                case "--sessions": o.Sessions = Int(a, v, 1, 100000); break;
                case "--workers": o.Workers = Int(a, v, 1, 1024); break;
                case "--cores": o.Cores = ParseCores(v); break;
                case "--coordinator-core": o.CoordinatorCore = Int(a, v, -1, 1023); break;
                case "--busy-poll-usecs": o.BusyPollUsecs = Int(a, v, 0, 1000000); break;
                case "--idle":
                    if (!IdleStrategy.TryParse(v, out o.Idle)) throw new UsageException($"--idle {v}: expected spin, yield or block");
                    break;
                case "--store": o.Store = v; break;
                case "--store-dir": break;  // no file store here
                case "--ready-file": o.ReadyFile = v; break;
                case "--flavour": break;
                default: throw new UsageException($"unknown option {a}");
            }
        }
        if (o.Version || o.CostOrders > 0) return o;
        if (o.Model is not ("single" or "mono" or "pool" or "shard"))
            throw new UsageException($"--model {o.Model}: expected single, mono, pool or shard");
        if (o.Transport is not ("kernel" or "onload" or "vma"))
            o.Unsupported = $"transport {o.Transport} (dotnet-pure serves kernel sockets; onload and vma take them over by preload)";
        else if (o.Store != "null")
            o.Unsupported = $"store {o.Store} (dotnet-pure keeps no message store: ResendRequests are answered with a gap fill)";
        if (o.CoordinatorCore < 0) o.CoordinatorCore = o.Cores[0];
        return o;
    }

    private static int Int(string flag, string v, int lo, int hi)
    {
        if (!int.TryParse(v, NumberStyles.Integer, CultureInfo.InvariantCulture, out int n) || n < lo || n > hi)
            throw new UsageException($"{flag} {v}: expected an integer from {lo} to {hi}");
        return n;
    }

    private static int[] ParseCores(string v)
    {
        string[] parts = v.Split(',');
        var cores = new int[parts.Length];
        for (int i = 0; i < parts.Length; i++) cores[i] = Int("--cores", parts[i], 0, 1023);
        return cores;
    }
}
