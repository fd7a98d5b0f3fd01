using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Reflection;
using System.Runtime;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using Kite.Harness;
using Kite.Transport;

namespace Kite.Server;

/// <summary>The flavour contract's server (docs/flavours.md): options, threads, ready file, SIGTERM.</summary>
public static class Program
{
    private const int ExitUsage = 2, ExitUnsupported = 3;
    private const int LogoutWaitMs = 2000;

    public static int Main(string[] args)
    {
        Options o;
        try
        {
            o = Options.Parse(args);
        }
        catch (UsageException e)
        {
            Console.Error.WriteLine($"kite-dotnet-pure: {e.Message}");
            Console.Error.WriteLine(Options.Usage);
            return ExitUsage;
        }
        if (o.Version)
        {
            Console.WriteLine(VersionLine());
            return 0;
        }
        if (o.CostOrders > 0) return Cost.Run(o.CostOrders);
        if (o.Unsupported is string why)
        {
            Console.Error.WriteLine($"unsupported: {why}");
            return ExitUnsupported;
        }
        try
        {
            return Serve(o);
        }
        catch (Exception e) when (e is InvalidOperationException or ArgumentException or IOException)
        {
            Console.Error.WriteLine($"kite-dotnet-pure: {e.Message}");
            return 1;
        }
    }

    public static string VersionLine()
    {
        string aot = RuntimeFeature.IsDynamicCodeSupported ? "jit" : "nativeaot";
        string tiered = AppContext.TryGetSwitch("System.Runtime.TieredCompilation", out bool tc) ? (tc ? "on" : "off") : "default";
        string gc = (GCSettings.IsServerGC ? "server" : "workstation") + "," + GCSettings.LatencyMode.ToString().ToLowerInvariant();
        string version = typeof(Program).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion ?? "?";
        return $"kite-dotnet-pure version={version} runtime=\"{RuntimeInformation.FrameworkDescription}\" " +
               $"code={aot} tiered_compilation={tiered} gc={gc} simd={(System.Runtime.Intrinsics.Vector256.IsHardwareAccelerated ? "256" : "128")}";
    }

    private static int Serve(Options o)
    {
        var stop = new StopFlag();
        // The runtime's signal thread starts here, on the unpinned main thread,
        // before any role thread exists.
        using IDisposable signals = ServerHarness.OnTerminate(stop.Set);

        int port = o.Port;
        var listeners = new List<int>();
        var workers = new List<Worker>();
        FrontDoor? front = null;
        int busyPoll = o.Transport == "kernel" ? o.BusyPollUsecs : 0;
        int perWorker(int count) => o.Sessions / count + 1 + 4;  // the lab's sessions, spread, and room for reconnects
        switch (o.Model)
        {
            case "single":
            case "mono":
            {
                int l = Sockets.Listen(o.Bind, port, false, out port);
                listeners.Add(l);
                var w = new Worker(o.Model == "single" ? "kite-single" : "kite-mono", o.Cores[0],
                                   o.Model == "single" ? ReadMode.Direct : ReadMode.Epoll, o.Sessions + 4, o.Idle, busyPoll, 0);
                w.AddListener(l);
                workers.Add(w);
                break;
            }
            case "shard":
                for (int i = 0; i < o.Workers; i++)
                {
                    int l = Sockets.Listen(o.Bind, port, true, out port);  // the first picks the port, the others share it
                    listeners.Add(l);
                    var w = new Worker($"kite-shard-{i}", o.Cores[i % o.Cores.Length], ReadMode.Epoll, perWorker(1), o.Idle,
                                       busyPoll, (ulong)i << 48);
                    w.AddListener(l);
                    workers.Add(w);
                }
                break;
            case "pool":
            {
                int l = Sockets.Listen(o.Bind, port, false, out port);
                listeners.Add(l);
                for (int i = 0; i < o.Workers; i++)
                    workers.Add(new Worker($"kite-pool-{i}", o.Cores[i % o.Cores.Length], ReadMode.Epoll, perWorker(o.Workers),
                                           o.Idle, busyPoll, (ulong)i << 48));
                front = new FrontDoor(l, o.CoordinatorCore, busyPoll, workers.ToArray(), o.Idle == IdleKind.Block);
                break;
            }
        }

        // Listening already (a bad address or a taken port fails before the warm-up).
        Warmup.Run();

        var started = new CountdownEvent(workers.Count + (front != null ? 1 : 0));
        string? failure = null;
        void Guard(Action body)
        {
            try
            {
                body();
            }
            catch (Exception e) when (e is InvalidOperationException or ArgumentException)
            {
                failure ??= e.Message;  // e.g. a core outside the process's CPU set
                stop.Set();
            }
        }
        var threads = new List<Thread>();
        foreach (Worker w in workers)
            threads.Add(new Thread(() => Guard(() => w.Run(stop, started, LogoutWaitMs))) { IsBackground = true });
        if (front != null) threads.Add(new Thread(() => Guard(() => front.Run(stop, started))) { IsBackground = true });
        foreach (Thread t in threads) t.Start();
        while (!started.Wait(50) && failure == null) { }
        if (failure != null)
        {
            stop.Set();
            foreach (Thread t in threads) t.Join();
            throw new InvalidOperationException(failure);
        }

        // What the runtime did during warm-up is behind us; what follows is the cell's.
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        GC.WaitForPendingFinalizers();
        int[] gc0 = { GC.CollectionCount(0), GC.CollectionCount(1), GC.CollectionCount(2) };
        long allocated0 = GC.GetTotalAllocatedBytes(precise: true);
        ServerHarness.WriteReady(o.ReadyFile, port);

        foreach (Thread t in threads) t.Join();
        foreach (Worker w in workers) Console.Error.WriteLine(w.LoadLine());
        foreach (Worker w in workers) Console.Error.WriteLine($"dotnet alloc: {w.Name} allocated={w.LoopAllocatedBytes} bytes in its loop");
        long allocated = GC.GetTotalAllocatedBytes(precise: true) - allocated0;
        int g0 = GC.CollectionCount(0) - gc0[0], g1 = GC.CollectionCount(1) - gc0[1], g2 = GC.CollectionCount(2) - gc0[2];
        Console.Error.WriteLine(FormattableString.Invariant($"dotnet gc: since ready gen0={g0} gen1={g1} gen2={g2} allocated={allocated} bytes"));
        foreach (int l in listeners) Sockets.Close(l);
        foreach (Worker w in workers) w.Dispose();
        return 0;
    }
}
