using System;
using System.Globalization;
using System.IO;
using System.Runtime.InteropServices;
using System.Threading;
using Kite;
using Kite.Harness;

namespace Kite.DotnetNative;

// The dotnet-native flavour's server (docs/flavours.md): Kite's engine,
// sockets, codec and session in libkite; the order-entry application in C#,
// called by the engine threads through the bindings.
internal static class Program
{
    private const string Name = "kite-dotnet-native";

    private static int Main(string[] args)
    {
        if (Array.IndexOf(args, "--version") >= 0) return PrintVersion();
        if (Array.IndexOf(args, "--help") >= 0 || Array.IndexOf(args, "-h") >= 0)
        {
            Console.WriteLine(Options.Usage);
            return 0;
        }
        Options o;
        try
        {
            o = Options.Parse(args);
        }
        catch (ArgumentException e)
        {
            Console.Error.WriteLine($"{Name}: {e.Message}\n{Options.Usage}");
            return 2;
        }
        if (o.Transport == "tls")
        {
            // libkite would serve it from the file's [tls] table, but the flavour declares no tls: unchecked.
            Console.Error.WriteLine($"unsupported: {Name} declares no tls transport (lab/flavours/dotnet-native.toml)");
            return 3;
        }
        try
        {
            return Serve(o);
        }
        catch (KiteException e) when (e.Status == Status.ErrorUnsupported)
        {
            // The lab marks the cell `unsupported` (exit 3, this line first).
            Console.Error.WriteLine(e.Message.StartsWith("unsupported:", StringComparison.Ordinal)
                ? e.Message : $"unsupported: {Name}: {e.Message}");
            return 3;
        }
        catch (KiteException e)
        {
            Console.Error.WriteLine($"{Name}: {e.Message}");
            return 1;
        }
    }

    private static int PrintVersion()
    {
        string kite;
        try
        {
            Library.EnsureLoaded();
            kite = Library.Version;
        }
        catch (KiteException e)
        {
            kite = "unloadable (" + e.Message + ")";
        }
        bool concurrent = System.Runtime.GCSettings.LatencyMode != System.Runtime.GCLatencyMode.Batch;
        Console.WriteLine($"{Name} runtime=\"{RuntimeInformation.FrameworkDescription}\" " +
                          $"tiered_compilation={AppContext.GetData("System.Runtime.TieredCompilation") ?? "default"} " +
                          $"gc={(System.Runtime.GCSettings.IsServerGC ? "server" : "workstation")}-" +
                          $"{(concurrent ? "concurrent" : "nonconcurrent")} libkite {kite}");
        return 0;
    }

    private static int Serve(Options o)
    {
        // SIGTERM and SIGINT: the runtime's signal thread starts here, before
        // the ready file, and only sets the event (no thread per signal).
        using var stop = new ManualResetEventSlim(false);
        using IDisposable signals = ServerHarness.OnTerminate(stop.Set);

        var app = new AckApplication(o.Sessions);
        using Acceptor acceptor = Acceptor.Start(ReadAcceptorFile(o.AcceptorConfig), app, o.AcceptorConfig);
        int port = acceptor.Port;
        Warmup.Run(o, port, app);
        app.ResetCounts();
        WriteReadyFile(o.ReadyFile, port);

        stop.Wait();
        acceptor.Shutdown(); // a Logout to every logged-on session, as kite-acceptor on SIGTERM
        PrintLoads(acceptor, app);
        if (app.CallbackErrors > 0) Console.Error.WriteLine($"{Name}: {app.CallbackErrors} callback(s) threw");
        return 0;
    }

    // The cell's kite-acceptor file, rendered by the lab for every flavour on Kite's engine.
    private static string ReadAcceptorFile(string path)
    {
        try
        {
            return File.ReadAllText(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new KiteException(Status.ErrorConfig, $"cannot read the acceptor file '{path}' (--acceptor-config): {e.Message}");
        }
    }

    private static void WriteReadyFile(string path, int port)
    {
        try
        {
            ServerHarness.WriteReady(path, port);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new KiteException(Status.ErrorStart, $"cannot write the ready file {path}: {e.Message}");
        }
    }

    // The `server load:` line of every serving thread.
    private static void PrintLoads(Acceptor acceptor, AckApplication app)
    {
        ThreadLoad[] loads = acceptor.ThreadLoads();
        long orders = app.OrderCount();
        foreach (ThreadLoad l in loads)
        {
            // Orders are counted for the whole server: exact for single and mono, one thread.
            long k = loads.Length == 1 ? orders : 0;
            Console.Error.WriteLine(ServerHarness.LoadLine(l.Name, (long)l.Cycles, (long)l.IdleCycles, l.BusyNs * 1e-9, l.TotalNs * 1e-9, k));
        }
    }
}
