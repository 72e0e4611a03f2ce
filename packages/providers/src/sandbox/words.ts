/** Vocabulary the sandbox provider draws names, captions and texts from. */

export const FIRST_NAMES = [
  'alex', 'amelia', 'ana', 'ben', 'camila', 'chloe', 'daniel', 'diego', 'elena', 'emma',
  'ethan', 'felix', 'grace', 'hana', 'hugo', 'isabel', 'ivan', 'jade', 'james', 'julia',
  'kai', 'kenji', 'laura', 'leo', 'lina', 'lucas', 'maya', 'mia', 'nadia', 'noah',
  'nora', 'oliver', 'omar', 'paula', 'priya', 'rafael', 'rosa', 'sam', 'sara', 'sofia',
  'tara', 'theo', 'tom', 'valentina', 'victor', 'yara', 'yuki', 'zoe', 'marco', 'ines',
] as const;

export const LAST_NAMES = [
  'silva', 'smith', 'garcia', 'muller', 'rossi', 'tanaka', 'kim', 'nguyen', 'martin', 'lopez',
  'costa', 'fischer', 'dubois', 'novak', 'ahmed', 'khan', 'okafor', 'jensen', 'moreau', 'santos',
  'park', 'sato', 'bianchi', 'schmidt', 'walker', 'reyes', 'cohen', 'patel', 'lee', 'haddad',
] as const;

export const HANDLE_WORDS = [
  'studio', 'daily', 'official', 'travels', 'eats', 'fit', 'art', 'photo', 'films', 'music',
  'designs', 'kitchen', 'life', 'world', 'club', 'hq', 'vibes', 'lab', 'journal', 'media',
] as const;

export const TOPIC_WORDS = [
  'sunset', 'coffee', 'weekend', 'studio', 'city', 'ocean', 'mountains', 'recipe', 'workout', 'design',
  'launch', 'tour', 'garden', 'vintage', 'street', 'market', 'festival', 'road trip', 'morning', 'project',
] as const;

export const PHRASES = [
  'Golden hour never disappoints',
  'New week, new goals',
  'Behind the scenes of today\'s shoot',
  'Tried something different this time',
  'Can\'t stop thinking about this place',
  'Small steps every day',
  'Weekend mode: on',
  'This one took three tries to get right',
  'Sharing a little piece of my routine',
  'Who else is ready for summer?',
  'Throwback to the best trip of the year',
  'Finally finished the project we teased last month',
  'Simple things, done well',
  'Our team put so much love into this',
  'Here is how we made it',
  'Tell me your favourite in the comments',
  'Out now, link in bio',
  'A quiet morning before the rush',
  'Fresh from the oven',
  'Still can\'t believe this view',
] as const;

export const TITLES = [
  'I Tried This for 30 Days',
  'The Honest Review',
  'How We Built It From Scratch',
  'A Day in My Life',
  'Beginner Guide: Everything You Need',
  'Top 10 Moments of the Year',
  'We Finally Did It',
  'Testing Viral Hacks',
  'Full Tour and Q&A',
  'What Nobody Tells You',
  'Road Trip Vlog, Part 2',
  'Cooking the Perfect Dinner',
  'Reacting to Your Comments',
  'Studio Session (Live)',
  'Explained in 5 Minutes',
] as const;

export const HASHTAGS = [
  'travel', 'photography', 'food', 'fitness', 'style', 'music', 'art', 'nature', 'design', 'love',
  'instagood', 'fyp', 'viral', 'summer', 'weekend', 'coffee', 'motivation', 'tech', 'diy', 'recipe',
  'streetstyle', 'sunset', 'goals', 'behindthescenes', 'newmusic', 'tutorial', 'vlog', 'explore',
  'smallbusiness', 'reels',
] as const;

export const COMMENTS = [
  'This is amazing!',
  'Love this so much',
  'Where is this?',
  'Need the recipe please',
  'Absolutely stunning',
  'Can\'t wait for the next one',
  'Saving this for later',
  'The colours are perfect',
  'You never miss',
  'How long did this take?',
  'Obsessed with this',
  'Take me there',
  'Goals!',
  'This made my day',
  'Underrated post',
  'First time seeing this, great work',
  'Agree with everything here',
  'Thanks for sharing',
] as const;

export const BIO_LINES = [
  'Creator and storyteller',
  'Coffee first, then the world',
  'Sharing what I make and where I go',
  'Official account',
  'Photographer based in Lisbon',
  'Designer. Runner. Dog person.',
  'Cooking simple food for busy people',
  'Making things with friends',
  'Business inquiries via email',
  'New videos every week',
] as const;

export const CATEGORIES = [
  'Clothing (Brand)', 'Restaurant', 'Software Company', 'Health/Beauty', 'Media/News Company',
  'Sports & Recreation', 'Retail Company', 'Travel Company', 'Musician/Band', 'Education',
] as const;

export const BRAND_PARTS_A = [
  'Blue', 'North', 'Bright', 'Urban', 'Green', 'Golden', 'Silver', 'Nova', 'Peak', 'True',
  'Open', 'Wild', 'Pure', 'Bold', 'Happy',
] as const;

export const BRAND_PARTS_B = [
  'Harbor', 'Leaf', 'Labs', 'Goods', 'Kitchen', 'Supply', 'Motion', 'Works', 'Studio', 'Market',
  'Fitness', 'Travel', 'Audio', 'Wear', 'Coffee',
] as const;

export const AD_BODIES = [
  'Limited time offer: 20% off everything this week.',
  'Discover the collection everyone is talking about.',
  'Free shipping on your first order.',
  'Join thousands of happy customers today.',
  'New season, new arrivals. Shop now.',
  'Try it free for 30 days, cancel anytime.',
  'Book your spot before it sells out.',
  'Made to last, designed to impress.',
] as const;

export const TRANSCRIPT_SENTENCES = [
  'Hey everyone, welcome back.',
  'Today I want to show you something I have been working on.',
  'So let us get right into it.',
  'The first thing you need is a plan.',
  'This part took longer than I expected.',
  'Honestly, I was surprised by the result.',
  'If you have tried this before, let me know.',
  'Here is the trick that made the difference.',
  'Make sure you do not skip this step.',
  'And that is pretty much it.',
  'Thanks for watching, see you in the next one.',
  'Let me know what you think in the comments.',
  'We will link everything below.',
  'Now, this is where it gets interesting.',
  'I will explain why in a second.',
] as const;

export const HIGHLIGHT_TITLES = [
  'Travel', 'Food', 'Studio', 'Q&A', 'Press', 'Tour', 'Friends', 'Shop', 'Reviews', 'Events',
  'Summer', 'Home', 'Work', 'Recipes', 'FAQ',
] as const;

export const PLAYLIST_TITLES = [
  'Best of the Channel', 'Tutorials', 'Vlogs', 'Live Sessions', 'Shorts Collection', 'Reviews',
  'Behind the Scenes', 'Podcast Episodes', 'Series: Season 1', 'Favourites',
] as const;

export const COUNTRIES = [
  'US', 'GB', 'DE', 'FR', 'ES', 'IT', 'BR', 'MX', 'CA', 'AU', 'NL', 'SE', 'PL', 'PT', 'JP', 'IN',
] as const;

export const EU_COUNTRIES = ['DE', 'FR', 'ES', 'IT', 'NL', 'SE', 'PL', 'PT', 'BE', 'AT', 'IE', 'DK'] as const;
