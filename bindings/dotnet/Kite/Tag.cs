namespace Kite;

/// <summary>FIX tag numbers the order-entry examples use.</summary>
public static class Tag
{
#pragma warning disable CS1591 // the names are FIX's own
    public const int AvgPx = 6;
    public const int BeginSeqNo = 7;
    public const int ClOrdID = 11;
    public const int CumQty = 14;
    public const int ExecID = 17;
    public const int MsgSeqNum = 34;
    public const int MsgType = 35;
    public const int OrderID = 37;
    public const int OrderQty = 38;
    public const int OrdStatus = 39;
    public const int OrdType = 40;
    public const int OrigClOrdID = 41;
    public const int Price = 44;
    public const int RefSeqNum = 45;
    public const int Side = 54;
    public const int Symbol = 55;
    public const int Text = 58;
    public const int TimeInForce = 59;
    public const int TransactTime = 60;
    public const int ExecType = 150;
    public const int LeavesQty = 151;
    public const int RefTagID = 371;
    public const int RefMsgType = 372;
    public const int SessionRejectReason = 373;
#pragma warning restore CS1591
}
