using System;
using System.Threading;
using Kite;
using Kite.DotnetNative;
using Xunit;

namespace Kite.Tests;

// The steady state allocates nothing on the managed heap, on either side of
// the crossing: the acceptor's C# application (the dotnet-native flavour's
// AckApplication) and the initiator's, which sends the next order from inside
// its callback for each ExecutionReport.
public class AllocationTests
{
    private const int Warm = 1_000;
    private const int Measured = 100_000;
    private const int Window = 8;

    // Reads the engine thread's allocated bytes at the first and the last measured order.
    private sealed class MeteredAck : Application
    {
        private readonly AckApplication _ack = new(1);
        private int _n;
        public long Before = -1, After = -1;

        public override void OnMessage(Session session, in Message message)
        {
            int n = ++_n;
            if (n == Warm) Before = GC.GetAllocatedBytesForCurrentThread();
            _ack.OnMessage(session, message);
            if (n == Warm + Measured) Volatile.Write(ref After, GC.GetAllocatedBytesForCurrentThread());
        }
    }

    private sealed class ClosedLoopClient : ClientApp
    {
        private long _next = Window;
        private int _reports;
        public long Before = -1, After = -1;
        public int Reports => Volatile.Read(ref _reports);

        public override void OnMessage(Session session, in Message message)
        {
            ReadOnlySpan<byte> t = message.MsgType;
            if (t.Length != 1 || t[0] != (byte)'8') return;
            int n = Interlocked.Increment(ref _reports);
            if (n == Warm) Before = GC.GetAllocatedBytesForCurrentThread();
            if (_next < Warm + Measured + Window) Rig.SendOrder(session, ++_next);
            if (n == Warm + Measured) Volatile.Write(ref After, GC.GetAllocatedBytesForCurrentThread());
        }
    }

    [Fact]
    public void hundredThousandOrdersAllocateNothingOnEitherSide()
    {
        var server = new MeteredAck();
        var client = new ClosedLoopClient();
        using var rig = new Rig(server, client: client);
        for (int k = 1; k <= Window; ++k) Assert.Equal(Status.Ok, Rig.SendOrder(rig.ClientSession, k));
        Wait.Until(() => Volatile.Read(ref server.After) >= 0 && Volatile.Read(ref client.After) >= 0,
                   $"{Warm + Measured} orders answered (at {client.Reports})");
        Assert.Equal(0, server.After - server.Before);
        Assert.Equal(0, client.After - client.Before);
        Assert.Equal(0, server.CallbackErrors);
    }
}
