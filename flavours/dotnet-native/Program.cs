using System;
using System.Globalization;
using System.IO;
using System.Runtime.InteropServices;
using System.Threading;
using Kite;

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
            // libkite serves tls from a [tls] table; this server does not pass one.
            Console.Error.WriteLine($"unsupported: {Name} has no tls transport: its configuration passes no certificate or key ([tls] table) to libkite");
            return 3;
        }
        try
        {
            return Serve(o);
        }
        catch (KiteException e) when (e.Status == Status.ErrorUnsupported)
        {
            // The lab marks the cell `unsupported` (exit 3, this line first).
            Console.Error.WriteLine($"unsupported: {Name} cannot run {o.Model} on {o.Transport}: {e.Message}");
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
        using PosixSignalRegistration term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, c => { c.Cancel = true; stop.Set(); });
        using PosixSignalRegistration intr = PosixSignalRegistration.Create(PosixSignal.SIGINT, c => { c.Cancel = true; stop.Set(); });

        var app = new AckApplication(o.Sessions);
        using Acceptor acceptor = Acceptor.Start(ServerConfig.Toml(o), app, Name);
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

    // The port and a newline, written to PATH.tmp and renamed: a reader never sees half a file.
    private static void WriteReadyFile(string path, int port)
    {
        if (path.Length == 0) return;
        try
        {
            string tmp = path + ".tmp";
            File.WriteAllText(tmp, port.ToString(CultureInfo.InvariantCulture) + "\n");
            File.Move(tmp, path, overwrite: true);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new KiteException(Status.ErrorStart, $"cannot write the ready file {path}: {e.Message}");
        }
    }

    // "server load: NAME polls=N empty=E% busy=B% busy/order=U us orders=K",
    // one line per serving thread (bench/roundtrip/server.hpp).
    private static void PrintLoads(Acceptor acceptor, AckApplication app)
    {
        ThreadLoad[] loads = acceptor.ThreadLoads();
        long orders = app.OrderCount();
        foreach (ThreadLoad l in loads)
        {
            // Orders are counted for the whole server: exact for single and mono, one thread.
            long k = loads.Length == 1 ? orders : 0;
            double busy = l.BusyNs * 1e-9, total = l.TotalNs * 1e-9;
            Console.Error.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"server load: {l.Name} polls={l.Cycles} empty={(l.Cycles > 0 ? 100.0 * l.IdleCycles / l.Cycles : 0.0):F1}% " +
                $"busy={(total > 0 ? 100.0 * busy / total : 0.0):F1}% busy/order={(k > 0 ? busy * 1e6 / k : 0.0):F2} us orders={k}"));
        }
    }
}
