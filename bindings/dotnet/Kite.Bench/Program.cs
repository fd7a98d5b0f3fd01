using System;
using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using Kite;
using Kite.DotnetNative;

namespace Kite.Bench;

// What the crossing between libkite and C# costs, three ways:
//  1. per order, on the real path: an acceptor (single, busy spin) answers a
//     closed loop of orders from an in-process initiator, once with
//     libkite's own C++ ack application and once with the dotnet-native
//     flavour's C# one; the acceptor thread's busy time per order is read
//     from the engine's own counters. The difference is what C# costs per
//     order: the two crossings (the callback in, the send out) and the C#
//     application's work against the C++ application's.
//  2. one native-to-managed call (an UnmanagedCallersOnly function called
//     from C, here by libc's qsort) against a managed call of the same function.
//  3. one managed-to-native call (kite_session_index) with and without the
//     GC transition.
internal static unsafe class Program
{
    private static int Main(string[] args)
    {
        int orders = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 200_000;
        string cores = args.Length > 1 ? args[1] : "";
        Library.EnsureLoaded();
        Console.WriteLine($"kite-dotnet-bench: {RuntimeInformation.FrameworkDescription}, libkite {Library.Version}");
        int rounds = args.Length > 2 ? int.Parse(args[2], CultureInfo.InvariantCulture) : 3;
        Console.WriteLine($"per order (acceptor thread busy time, {orders} orders, closed loop, one in flight; " +
                          $"C++ and C# alternate, {rounds} rounds, the lowest kept):");
        double cpp = double.MaxValue, cs = double.MaxValue;
        for (int r = 0; r < rounds; ++r)
        {
            double a = PerOrder(null, orders, cores), b = PerOrder(new AckApplication(1), orders, cores);
            Console.WriteLine(F($"  round {r + 1}: C++ {a,8:F0} ns  C# {b,8:F0} ns"));
            cpp = Math.Min(cpp, a);
            cs = Math.Min(cs, b);
        }
        Console.WriteLine(F($"  C++ ack (libkite's [app] mode)  {cpp,8:F0} ns/order"));
        Console.WriteLine(F($"  C# ack  (dotnet-native)         {cs,8:F0} ns/order"));
        Console.WriteLine(F($"  difference                      {cs - cpp,8:F0} ns/order"));
        Crossings();
        return 0;
    }

    private static string F(FormattableString s) => s.ToString(CultureInfo.InvariantCulture);

    private sealed class Client : Application
    {
        private readonly long _limit;
        private long _next = 1;
        public long Reports;

        public Client(long limit) => _limit = limit;

        public override void OnMessage(Session session, in Message message)
        {
            ReadOnlySpan<byte> t = message.MsgType;
            if (t.Length != 1 || t[0] != (byte)'8') return;
            Volatile.Write(ref Reports, Reports + 1);
            if (_next < _limit) Order(session, ++_next);
        }
    }

    internal static Status Order(Session s, long n)
    {
        Span<byte> body = stackalloc byte[256];
        var w = new FieldWriter(body);
        Span<byte> id = stackalloc byte[13];
        id[0] = (byte)'C';
        for (int i = 12; i >= 1; --i, n /= 10) id[i] = (byte)('0' + n % 10);
        w.Add(Tag.ClOrdID, id);
        w.Add(21, '1');
        w.Add(1, "BENCH-ACCOUNT-001"u8);
        w.Add(Tag.Symbol, "KITE.XPAR"u8);
        w.Add(Tag.Side, '1');
        w.AddUtcTimestampMillis(Tag.TransactTime, 1_764_000_000_000_000_000);
        w.Add(Tag.OrderQty, 100L);
        w.Add(Tag.OrdType, '2');
        w.Add(Tag.Price, new FixDecimal(10125, 2));
        w.Add(Tag.TimeInForce, '0');
        return s.Send("D"u8, w.Written);
    }

    // Busy nanoseconds of the acceptor thread per order, warm-up excluded
    // (the counters are read after a first tenth of the orders).
    private static double PerOrder(Application? server, int orders, string cores)
    {
        string[] core = cores.Split(',', StringSplitOptions.RemoveEmptyEntries);
        string acceptorCores = core.Length > 0 ? core[0] : "";
        string initiatorCores = core.Length > 1 ? core[1] : "";
        string toml =
            $"[engine]\nmodel = \"single\"\ntransport = \"kernel\"\nbind = \"127.0.0.1\"\nport = 0\nidle = \"busy_spin\"\ncores = [{acceptorCores}]\n" +
            "\n[app]\nmode = \"ack\"\n" +
            "\n[defaults]\nBeginString = \"FIX.4.4\"\nSenderCompID = \"KITE\"\nResetOnLogon = true\n" +
            "UseDataDictionary = false\nCheckLatency = false\nStoreKind = \"null\"\n\n[[session]]\nTargetCompID = \"BENCH0\"\n";
        using Acceptor acceptor = Acceptor.Start(toml, server, "bench acceptor");
        var client = new Client(orders);
        string itoml =
            $"[engine]\ntransport = \"kernel\"\nidle = \"busy_spin\"\ncores = [{initiatorCores}]\n" +
            "\n[defaults]\nBeginString = \"FIX.4.4\"\nSenderCompID = \"BENCH0\"\nResetOnLogon = true\n" +
            "UseDataDictionary = false\nCheckLatency = false\nStoreKind = \"null\"\n" +
            $"\n[[session]]\nTargetCompID = \"KITE\"\nConnectionType = \"initiator\"\nSocketConnectHost = \"127.0.0.1\"\nSocketConnectPort = {acceptor.Port}\nHeartBtInt = 30\n";
        using Initiator initiator = Initiator.Start(itoml, client, "bench initiator");
        while (!initiator.Session(0).LoggedOn) Thread.Sleep(1);
        Order(initiator.Session(0), 1);
        long warm = orders / 10;
        while (Volatile.Read(ref client.Reports) < warm) Thread.Sleep(1);
        ThreadLoad before = acceptor.ThreadLoads()[0];
        long atBefore = Volatile.Read(ref client.Reports);
        while (Volatile.Read(ref client.Reports) < orders) Thread.Sleep(1);
        ThreadLoad after = acceptor.ThreadLoads()[0];
        long atAfter = Volatile.Read(ref client.Reports);
        initiator.Shutdown(1000);
        return (double)(after.BusyNs - before.BusyNs) / (atAfter - atBefore);
    }

    private static long _compares;

    [UnmanagedCallersOnly(CallConvs = new[] { typeof(CallConvCdecl) })]
    private static int Compare(void* a, void* b)
    {
        ++_compares;
        return CompareManaged(a, b);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int CompareManaged(void* a, void* b) => (*(int*)a).CompareTo(*(int*)b);

    [DllImport("libc", EntryPoint = "qsort")]
    private static extern void QSort(void* items, nuint count, nuint size, delegate* unmanaged[Cdecl]<void*, void*, int> compare);

    [DllImport("libkite", EntryPoint = "kite_session_index")]
    private static extern nuint SessionIndexWithTransition(void* session);

    [DllImport("libkite", EntryPoint = "kite_session_index")]
    [SuppressGCTransition]
    private static extern nuint SessionIndexWithoutTransition(void* session);

    private static double Best(int rounds, Func<double> run)
    {
        double best = double.MaxValue;
        for (int r = 0; r < rounds; ++r) best = Math.Min(best, run());
        return best;
    }

    private static void Crossings()
    {
        Console.WriteLine("one crossing (best of 5 rounds):");
        const int N = 1 << 20;
        int* items = (int*)NativeMemory.Alloc(N, sizeof(int));
        var random = new Random(7);
        double qsort = Best(5, () =>
        {
            for (int i = 0; i < N; ++i) items[i] = random.Next();
            _compares = 0;
            var clock = Stopwatch.StartNew();
            QSort(items, N, sizeof(int), &Compare);
            return clock.Elapsed.TotalNanoseconds / _compares;
        });
        const int M = 10_000_000;
        delegate*<void*, void*, int> managed = &CompareManaged;
        double direct = Best(5, () =>
        {
            int sum = 0;
            var clock = Stopwatch.StartNew();
            for (int i = 0; i < M; ++i) sum += managed(items + (i & 1023), items + ((i + 1) & 1023));
            double t = clock.Elapsed.TotalNanoseconds / M;
            return sum == int.MinValue ? 0 : t;
        });
        NativeMemory.Free(items);
        Console.WriteLine(F($"  libc qsort calling a C# comparator (native -> C#)  {qsort,6:F1} ns per comparison"));
        Console.WriteLine(F($"  the same comparator called from C#                  {direct,6:F1} ns per call"));

        using Acceptor a = Acceptor.Start(
            "[engine]\nmodel = \"single\"\ntransport = \"kernel\"\nbind = \"127.0.0.1\"\nport = 0\nidle = \"block\"\n" +
            "\n[defaults]\nBeginString = \"FIX.4.4\"\nSenderCompID = \"KITE\"\nStoreKind = \"null\"\n\n[[session]]\nTargetCompID = \"B\"\n",
            null);
        void* s = (void*)a.Session(0).Handle;
        double with = Best(5, () =>
        {
            nuint sum = 0;
            var clock = Stopwatch.StartNew();
            for (int i = 0; i < M; ++i) sum += SessionIndexWithTransition(s);
            double t = clock.Elapsed.TotalNanoseconds / M;
            return sum == 1 ? 0 : t;
        });
        double without = Best(5, () =>
        {
            nuint sum = 0;
            var clock = Stopwatch.StartNew();
            for (int i = 0; i < M; ++i) sum += SessionIndexWithoutTransition(s);
            double t = clock.Elapsed.TotalNanoseconds / M;
            return sum == 1 ? 0 : t;
        });
        Console.WriteLine(F($"  C# -> kite_session_index with the GC transition     {with,6:F1} ns per call"));
        Console.WriteLine(F($"  C# -> kite_session_index without it (as Send does)  {without,6:F1} ns per call"));
    }
}
