// The actions `ConsumerStateMachine` transitions return: what the caller does once it released the lock.

extension ConsumerStateMachine {
    /// What `next()` does once the lock is released.
    enum NextAction: Sendable {
        /// Return this event at once.
        case deliver(Event)
        /// Return nil: the consumer finished (or the task was cancelled) with nothing buffered.
        case end
        /// The continuation is parked: an enqueue, `finish()` or cancellation resumes it.
        case suspend
    }

    /// What happens to a new event.
    enum Delivery: Sendable {
        /// Resume the parked `next()` with it.
        case resume(EventWaiter, Event)
        /// It waits in the buffer.
        case buffered

        func perform() {
            if case .resume(let waiter, let event) = self { waiter.resume(returning: event) }
        }
    }

    /// What the revoke callback does after the `.revoked` event was delivered.
    enum RevocationAction: Sendable {
        /// Wait (polling ``revocationWait(deadlinePassed:)``) for the acknowledgement, then unassign.
        case awaitAcknowledgement(Delivery)
        /// Unassign at once: closing, or nothing was ever assigned that the worker could have processed.
        case unassign(Delivery)

        var delivery: Delivery {
            switch self {
            case .awaitAcknowledgement(let delivery), .unassign(let delivery): delivery
            }
        }
    }

    /// The revoke callback's next step while it waits.
    enum RevocationWaitAction: Sendable, Equatable {
        case keepWaiting
        /// The worker acknowledged: unassign.
        case unassign
        /// Nobody acknowledged in time: unassign anyway (and say so in the log).
        case unassignAfterDeadline
    }

    /// A librdkafka pause or resume to make, in the order decided (see `ConsumerState.changeFetching`).
    enum FetchAction: Sendable, Equatable {
        case pause([TopicPartition])
        case resume([TopicPartition])
        /// Nothing to tell librdkafka.
        case unchanged
    }

    /// How the poll thread leaves the group.
    enum CloseAction: Sendable, Equatable {
        /// `rd_kafka_consumer_close`, then destroy as usual.
        case leaveGroup
        /// `rd_kafka_consumer_close`, then leak the client: it never completed a rebalance
        /// (confluentinc/librdkafka#4312).
        case leaveGroupAndAbandonClient
    }

    /// Whom the end of the poll thread wakes.
    enum FinishAction: Sendable {
        /// Resume a parked `next()` with nil and every `close()`.
        case wake(next: EventWaiter?, closers: [CloseWaiter])
        case alreadyFinished

        func perform() {
            guard case .wake(let next, let closers) = self else { return }
            next?.resume(returning: nil)
            for closer in closers { closer.resume() }
        }
    }

    /// What `close()` does while waiting for the end.
    enum CloseWaitAction: Sendable, Equatable {
        /// Already finished: return now.
        case resumeNow
        /// Parked: ``finish()`` resumes it.
        case suspend
    }
}
