package kafkabench;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import kafkabench.KafkabenchWorker.WorkerFailure;

/**
 * What became of the records sent: acks and failures as the producer reports them, on its I/O thread (and
 * on the sending thread for a record refused at once). Running totals only, nothing per record.
 */
final class SendOutcomes {
    private final AtomicLong acked = new AtomicLong();
    private final AtomicLong payloadBytes = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final Map<String, LongAdder> errorsByType = new ConcurrentHashMap<>();
    private volatile long lastAckNs, lastErrorNs; // lastAckNs: the start until the first ack
    private volatile String firstError; // usually the cause; what follows tends to be its consequences

    void startAt(long startNs) {
        lastAckNs = startNs;
    }

    /** The producer's callback: an ack (exception null) or a failure of one record sent at tSend. */
    void completed(long tSend, int payloadLength, Exception exception, LatencyMetric publishLatency) {
        long now = System.nanoTime();
        if (exception == null) {
            synchronized (this) { // an ack's latency and its count fall into one window (see counted)
                publishLatency.record(now - tSend);
                payloadBytes.addAndGet(payloadLength);
                acked.incrementAndGet();
            }
            lastAckNs = now;
        } else {
            String type = exception.getClass().getSimpleName();
            errorsByType.computeIfAbsent(type, t -> new LongAdder()).increment();
            if (firstError == null) firstError = oneLine(type + ": " + exception.getMessage());
            lastErrorNs = now;
            errors.incrementAndGet();
        }
    }

    /** No progress at all: sends failed and none succeeded for timeoutNs; ends the run as a failure. */
    void checkProgress(long now, long timeoutNs) throws WorkerFailure {
        long lastAck = lastAckNs;
        if (errors.get() > 0 && lastErrorNs - lastAck > 0 && now - lastAck >= timeoutNs) {
            throw new WorkerFailure("failure", String.format("%d sends failed (%s) and none succeeded for %s s",
                    errors.get(), firstError, KafkabenchWorker.seconds(timeoutNs / 1e9)));
        }
    }

    private static String oneLine(String text) {
        String line = text.replace('\n', ' ');
        return line.length() <= 160 ? line : line.substring(0, 157) + "...";
    }

    /** `close` (a window's latencies taken) with no ack in between: the window's count and latencies agree. */
    synchronized void counted(Runnable close) {
        close.run();
    }

    long acked() {
        return acked.get();
    }

    long payloadBytes() {
        return payloadBytes.get();
    }

    long errors() {
        return errors.get();
    }

    /** The last ack's time, null before any. */
    Long lastAckNs() {
        return acked.get() > 0 ? lastAckNs : null;
    }

    /** acked, errors, errors.<ExceptionType>..., payload_bytes. */
    void addCounters(Map<String, Object> counters) {
        counters.put("acked", acked.get());
        counters.put("errors", errors.get());
        new TreeMap<>(errorsByType).forEach((type, count) -> counters.put("errors." + type, count.sum()));
        counters.put("payload_bytes", payloadBytes.get());
    }
}
