// The pass runner: the mechanics of one pass over a stream, apart from what a pass does. Batches (a fixed pool of
// `tokens`, reused) go through three stages: read (serial, in input order), parse (parallel) and consume (serial,
// in input order). consume runs in oneTBB's last filter, or with own_thread on one thread of its own fed in input
// order through a queue (Driver::learns_apart says why). The first exception of any stage stops the pass and is
// rethrown once every thread has stopped; `stop` set by anyone stops reading.
#pragma once
#include <tbb/concurrent_queue.h>
#include <tbb/parallel_pipeline.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace lepus {

// read(b) fills b with the next block and returns false at the end of the stream; parse(b) and consume(b) work on
// a batch read. Every batch is back in the pool when run_pass_stages returns.
template <class Batch, class Read, class Parse, class Consume>
void run_pass_stages(size_t tokens, bool own_thread, std::atomic<bool>& stop, Read&& read, Parse&& parse,
                     Consume&& consume) {
  std::vector<std::unique_ptr<Batch>> pool;
  tbb::concurrent_bounded_queue<Batch*> free;
  for (size_t i = 0; i < tokens; ++i) {
    pool.push_back(std::make_unique<Batch>());
    free.push(pool.back().get());
  }
  std::mutex ready_mutex;
  std::condition_variable ready_signal;
  std::deque<Batch*> ready;  // parsed batches in input order; nullptr: the end
  auto hand_over = [&](Batch* b) {
    {
      const std::lock_guard<std::mutex> lock(ready_mutex);
      ready.push_back(b);
    }
    ready_signal.notify_one();
  };
  std::exception_ptr failure;
  std::thread consumer;
  if (own_thread) {
    consumer = std::thread([&] {
      for (;;) {
        Batch* b = nullptr;
        {
          std::unique_lock<std::mutex> lock(ready_mutex);
          ready_signal.wait(lock, [&] { return !ready.empty(); });
          b = ready.front();
          ready.pop_front();
        }
        if (b == nullptr) return;
        if (!failure && !stop) {
          try {
            consume(*b);
          } catch (...) {
            failure = std::current_exception();
            stop = true;
          }
        }
        free.push(b);
      }
    });
  }
  auto read_stage = [&](tbb::flow_control& fc) -> Batch* {
    Batch* b = nullptr;
    if (stop) {
      fc.stop();
      return nullptr;
    }
    free.pop(b);  // one is free or will be: the consumer returns them
    if (stop || !read(*b)) {
      free.push(b);
      fc.stop();
      return nullptr;
    }
    return b;
  };
  auto parse_stage = [&](Batch* b) {
    parse(*b);
    return b;
  };
  auto consume_stage = [&](Batch* b) {
    if (own_thread) {
      hand_over(b);
      return;
    }
    consume(*b);
    free.push(b);
  };
  try {
    tbb::parallel_pipeline(
        tokens, tbb::make_filter<void, Batch*>(tbb::filter_mode::serial_in_order, read_stage) &
                    tbb::make_filter<Batch*, Batch*>(tbb::filter_mode::parallel, parse_stage) &
                    tbb::make_filter<Batch*, void>(tbb::filter_mode::serial_in_order, consume_stage));
  } catch (...) {
    if (own_thread) {
      stop = true;
      hand_over(nullptr);
      consumer.join();
    }
    throw;
  }
  if (own_thread) {
    hand_over(nullptr);
    consumer.join();
    if (failure) std::rethrow_exception(failure);
  }
}

}  // namespace lepus
